package filter

import (
	"fmt"
	"strings"
	"testing"
)

// rangeString renders a KeyRange as PK[lo,hi] RK[lo,hi] with ( ) for
// exclusive ends and * for none.
func rangeString(r KeyRange) string {
	b := func(lo, hi Bound) string {
		var s strings.Builder
		switch {
		case lo.Unbounded:
			s.WriteString("(*")
		case lo.Inclusive:
			fmt.Fprintf(&s, "[%s", lo.Value)
		default:
			fmt.Fprintf(&s, "(%s", lo.Value)
		}
		s.WriteString(",")
		switch {
		case hi.Unbounded:
			s.WriteString("*)")
		case hi.Inclusive:
			fmt.Fprintf(&s, "%s]", hi.Value)
		default:
			fmt.Fprintf(&s, "%s)", hi.Value)
		}
		return s.String()
	}
	return "PK" + b(r.PKLow, r.PKHigh) + " RK" + b(r.RKLow, r.RKHigh)
}

func TestPlan(t *testing.T) {
	tests := []struct {
		rule, filter string
		kind         Kind
		ranges       []string
	}{
		{"empty filter is a table scan", "", TableScan, []string{"PK(*,*) RK(*,*)"}},
		{"point query", "PartitionKey eq 'a' and RowKey eq '1'", PointQuery, []string{"PK[a,a] RK[1,1]"}},
		{"point query with a property filter", "PartitionKey eq 'a' and RowKey eq '1' and Age gt 3", PointQuery, []string{"PK[a,a] RK[1,1]"}},
		{"or of point queries spans partitions", "(PartitionKey eq 'b' and RowKey eq '2') or (PartitionKey eq 'a' and RowKey eq '1')", PartitionRange,
			[]string{"PK[a,a] RK[1,1]", "PK[b,b] RK[2,2]"}},
		{"row range", "PartitionKey eq 'a' and RowKey ge '1' and RowKey lt '5'", RowRange, []string{"PK[a,a] RK[1,5)"}},
		{"row range one-sided", "PartitionKey eq 'a' and RowKey gt '1'", RowRange, []string{"PK[a,a] RK(1,*)"}},
		{"partition scan", "PartitionKey eq 'a' and Age gt 3", PartitionScan, []string{"PK[a,a] RK(*,*)"}},
		{"partition range", "PartitionKey ge 'a' and PartitionKey lt 'c'", PartitionRange, []string{"PK[a,c) RK(*,*)"}},
		{"partition range with RowKey bound", "PartitionKey gt 'a' and RowKey eq 'x'", PartitionRange, []string{"PK(a,*) RK[x,x]"}},
		{"table scan", "Age gt 3", TableScan, []string{"PK(*,*) RK(*,*)"}},
		{"RowKey only is a table scan", "RowKey eq 'x'", TableScan, []string{"PK(*,*) RK[x,x]"}},
		{"or with a non-key term is a table scan", "PartitionKey eq 'a' or Age gt 3", TableScan, []string{"PK(*,*) RK(*,*)"}},
		{"contradiction is empty", "PartitionKey eq 'a' and PartitionKey eq 'b'", Empty, nil},
		{"PartitionKey lt '' is empty", "PartitionKey lt ''", Empty, nil},
		{"key against a number is empty", "PartitionKey eq 1", Empty, nil},
		{"ge '' is no bound", "PartitionKey ge ''", TableScan, []string{"PK(*,*) RK(*,*)"}},
		{"ne splits in two", "PartitionKey ne 'm'", PartitionRange, []string{"PK(*,m) RK(*,*)", "PK(m,*) RK(*,*)"}},
		{"not over key eq is ne", "not (PartitionKey eq 'm')", PartitionRange, []string{"PK(*,m) RK(*,*)", "PK(m,*) RK(*,*)"}},
		{"not over or (De Morgan)", "not (PartitionKey lt 'a' or PartitionKey gt 'c')", PartitionRange, []string{"PK[a,c] RK(*,*)"}},
		{"not over a number comparison is everything", "not (PartitionKey eq 1)", TableScan, []string{"PK(*,*) RK(*,*)"}},
		{"not over a property widens", "PartitionKey eq 'a' and not (Age eq 3)", PartitionScan, []string{"PK[a,a] RK(*,*)"}},
		{"overlapping or merges", "PartitionKey ge 'a' and PartitionKey le 'c' or PartitionKey ge 'b' and PartitionKey le 'd'", PartitionRange,
			[]string{"PK[a,d] RK(*,*)"}},
		{"and distributes over or", "(PartitionKey eq 'a' or PartitionKey eq 'b') and RowKey eq '1'", PartitionRange,
			[]string{"PK[a,a] RK[1,1]", "PK[b,b] RK[1,1]"}},
		{"or over RowKeys is a partition scan (guide)", "PartitionKey eq 'a' and (RowKey eq '1' or RowKey eq '3')", PartitionScan,
			[]string{"PK[a,a] RK[1,1]", "PK[a,a] RK[3,3]"}},
		{"or over two partitions is a partition range", "(PartitionKey eq 'a' and RowKey eq '1') or PartitionKey eq 'b'", PartitionRange,
			[]string{"PK[a,a] RK[1,1]", "PK[b,b] RK(*,*)"}},
		{"or of overlapping RowKey ranges merges, still a partition scan", "PartitionKey eq 'a' and (RowKey lt 'c' or RowKey ge 'b')", PartitionScan,
			[]string{"PK[a,a] RK(*,*)"}},
		{"RowKey ne is an or", "PartitionKey eq 'a' and RowKey ne 'c'", PartitionScan,
			[]string{"PK[a,a] RK(*,c)", "PK[a,a] RK(c,*)"}},
		{"not over RowKey eq is an or", "PartitionKey eq 'a' and not (RowKey eq 'c')", PartitionScan,
			[]string{"PK[a,a] RK(*,c)", "PK[a,a] RK(c,*)"}},
		{"not over RowKey ne is a point", "PartitionKey eq 'a' and not (RowKey ne 'c')", PointQuery,
			[]string{"PK[a,a] RK[c,c]"}},
		{"or over non-keys keeps a row range", "PartitionKey eq 'a' and RowKey gt 'c' and (Age eq 1 or Age eq 2)", RowRange,
			[]string{"PK[a,a] RK(c,*)"}},
		{"not over an and of keys is an or", "PartitionKey eq 'a' and not (RowKey ge 'c' and RowKey le 'a')", PartitionScan,
			[]string{"PK[a,a] RK(*,*)"}},
		{"point inside a partition scan merges", "(PartitionKey eq 'a' and RowKey eq '1') or PartitionKey eq 'a'", PartitionScan,
			[]string{"PK[a,a] RK(*,*)"}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			f, err := Parse(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			p := f.Plan()
			if p.Kind != tt.kind {
				t.Errorf("Kind = %v, want %v", p.Kind, tt.kind)
			}
			var got []string
			for _, r := range p.Ranges {
				got = append(got, rangeString(r))
			}
			if strings.Join(got, "; ") != strings.Join(tt.ranges, "; ") {
				t.Errorf("Ranges = %q, want %q", got, tt.ranges)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	want := map[Kind]string{Empty: "empty", PointQuery: "point query", RowRange: "row range",
		PartitionScan: "partition scan", PartitionRange: "partition range", TableScan: "table scan", Kind(99): "unknown"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), s)
		}
	}
	if !(PointQuery < RowRange && RowRange < PartitionScan && PartitionScan < PartitionRange && PartitionRange < TableScan) {
		t.Error("kinds are not in the guide's efficiency order")
	}
}

func TestKeyRangeWalk(t *testing.T) {
	r := KeyRange{
		PKLow: Bound{Value: "a", Inclusive: false}, PKHigh: Bound{Value: "c", Inclusive: true},
		RKLow: Bound{Value: "m", Inclusive: true}, RKHigh: Bound{Value: "p", Inclusive: false},
	}
	pk, rk, ok := r.Start()
	if !ok || pk != "a\x00" || rk != "m" {
		t.Fatalf("Start() = %q, %q, %v; want \"a\\x00\", \"m\", true", pk, rk, ok)
	}
	cases := []struct {
		pk, rk         string
		contains, past bool
	}{
		{"a", "n", false, false},   // PK excluded; before the range
		{"b", "a", false, false},   // RK below: outside, but the walk goes on
		{"b", "m", true, false},    // inside
		{"b", "p", false, false},   // RK at the exclusive end
		{"c", "o", true, false},    // last partition, inside
		{"c", "p", false, true},    // last partition past the RowKey end
		{"c\x00", "", false, true}, // past the last partition
		{"d", "a", false, true},
	}
	for _, c := range cases {
		if got := r.Contains(c.pk, c.rk); got != c.contains {
			t.Errorf("Contains(%q, %q) = %v, want %v", c.pk, c.rk, got, c.contains)
		}
		if got := r.Past(c.pk, c.rk); got != c.past {
			t.Errorf("Past(%q, %q) = %v, want %v", c.pk, c.rk, got, c.past)
		}
	}
	full := KeyRange{PKLow: unbounded, PKHigh: unbounded, RKLow: unbounded, RKHigh: unbounded}
	if _, _, ok := full.Start(); ok {
		t.Error("an unbounded range must report no start")
	}
	if full.Past("\uffff\uffff", "\uffff") {
		t.Error("an unbounded range is never past")
	}
	excl := KeyRange{PKLow: unbounded, PKHigh: Bound{Value: "b"}, RKLow: unbounded, RKHigh: unbounded}
	if !excl.Past("b", "") || excl.Past("a\uffff", "zzz") {
		t.Error("an exclusive PartitionKey end is past at the end value and not before")
	}
}
