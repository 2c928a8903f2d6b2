package encryption_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
)

// ten properties, three of them encrypted strings.
type benchRow struct {
	PK    string `table:",pk"`
	RK    string `table:",rk"`
	Name  string `table:",encrypt"`
	Email string `table:",encrypt"`
	Phone string `table:",encrypt"`
	City  string
	Zip   string
	Age   int32
	Score float64
	Flag  bool
	Count int64
	Note  string
}

func benchRepos(b *testing.B) (plain, enc *mapper.Repository[benchRow]) {
	ctx := context.Background()
	ms := memstore.New()
	for _, n := range []string{"Plain", "Sealed"} {
		if err := ms.CreateTable(ctx, n); err != nil {
			b.Fatal(err)
		}
	}
	props, err := mapper.EncryptedProperties[benchRow]()
	if err != nil {
		b.Fatal(err)
	}
	key, _ := encryption.NewLocalKey("bench", make([]byte, 32)) // a TEST key
	c, err := encryption.NewCodec(encryption.Config{Key: key, Properties: props})
	if err != nil {
		b.Fatal(err)
	}
	return mapper.NewRepository[benchRow](ms, "Plain"), mapper.NewRepository[benchRow](c.Store(ms, "Sealed"), "Sealed")
}

func benchValue(i int) *benchRow {
	return &benchRow{PK: "p", RK: fmt.Sprintf("%09d", i), Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+44 20 7946 0000",
		City: "London", Zip: "W1", Age: 36, Score: 9.5, Flag: true, Count: 1815, Note: "analytical engine"}
}

// BenchmarkEncryptInterleaved measures a typed insert of a 10-property
// entity with 3 encrypted strings against the same insert unencrypted,
// and a typed point read likewise, interleaved on memstore.
func BenchmarkEncryptInterleaved(b *testing.B) {
	ctx := context.Background()
	plain, enc := benchRepos(b)
	for i := range 1000 {
		if err := plain.Insert(ctx, benchValue(-1-i)); err != nil {
			b.Fatal(err)
		}
		if err := enc.Insert(ctx, benchValue(-1-i)); err != nil {
			b.Fatal(err)
		}
	}
	insert := func(r *mapper.Repository[benchRow]) func(int) error {
		return func(i int) error { return r.Insert(ctx, benchValue(i)) }
	}
	get := func(r *mapper.Repository[benchRow]) func(int) error {
		return func(i int) error {
			v, err := r.Get(ctx, "p", fmt.Sprintf("%09d", -1-i%1000))
			if err == nil && v.Name != "Ada Lovelace" {
				err = fmt.Errorf("read %q", v.Name)
			}
			return err
		}
	}
	b.ResetTimer()
	for _, bc := range []struct {
		name      string
		base, enc interleave.Case
	}{
		{"insert", interleave.Case{Name: "plain insert", Op: insert(plain)}, interleave.Case{Name: "encrypted insert", Op: insert(enc)}},
		{"get", interleave.Case{Name: "plain get", Op: get(plain)}, interleave.Case{Name: "decrypted get", Op: get(enc)}},
	} {
		rep, err := interleave.Measure(interleave.Config{CollectGarbage: true}, bc.base, bc.enc)
		if err != nil {
			b.Fatal(err)
		}
		row, _ := rep.Row(bc.enc.Name)
		b.ReportMetric(row.CPURatio.Median, "x-cpu-"+bc.name)
		b.ReportMetric(row.WallRatio.Median, "x-wall-"+bc.name)
		b.Logf("%s\n%s", bc.name, rep.Table())
	}
}

// BenchmarkEncryptedInsert and BenchmarkDecryptedGet run one side of
// BenchmarkEncryptInterleaved alone, for profiles (-cpuprofile).
func BenchmarkEncryptedInsert(b *testing.B) {
	ctx := context.Background()
	_, enc := benchRepos(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := enc.Insert(ctx, benchValue(i)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptedGet(b *testing.B) {
	ctx := context.Background()
	_, enc := benchRepos(b)
	for i := range 1000 {
		if err := enc.Insert(ctx, benchValue(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := enc.Get(ctx, "p", fmt.Sprintf("%09d", i%1000)); err != nil {
			b.Fatal(err)
		}
	}
}
