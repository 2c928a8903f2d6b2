package filter

import "testing"

const typicalFilter = "PartitionKey eq 'Sales' and RowKey ge '2024-01' and RowKey lt '2024-02' and Age gt 30 and Name ne 'O''Brien'"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(typicalFilter); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch evaluates a 3-comparison filter against a 10-property
// entity; the target is 0 allocs/op.
func BenchmarkMatch(b *testing.B) {
	f, err := Parse("PartitionKey eq 'Sales' and Age ge 30 and Name ne 'x'")
	if err != nil {
		b.Fatal(err)
	}
	e := sample()
	if !f.Match(e) {
		b.Fatal("the benchmark entity must match")
	}
	b.ReportAllocs()
	for b.Loop() {
		if !f.Match(e) {
			b.Fatal("no match")
		}
	}
}

// BenchmarkMatchMiss is the common case of a scan: the first comparison fails.
func BenchmarkMatchMiss(b *testing.B) {
	f, err := Parse("Age gt 40 and PartitionKey eq 'Sales' and Name ne 'x'")
	if err != nil {
		b.Fatal(err)
	}
	e := sample()
	b.ReportAllocs()
	for b.Loop() {
		if f.Match(e) {
			b.Fatal("match")
		}
	}
}

func BenchmarkPlan(b *testing.B) {
	f, err := Parse("(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey eq '2')")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Plan()
	}
}

func BenchmarkBuild(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		c := And(PK.Eq("Sales"), RK.HasPrefix("2024-01"), Prop("Age").Gt(int32(30)))
		if c.String() == "" {
			b.Fatal("empty")
		}
	}
}
