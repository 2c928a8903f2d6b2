package encryption_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
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
	plain, enc, _ = benchReposOn(b, memstore.New(), "Plain", "Sealed")
	return plain, enc
}

// benchReposOn creates the tables plain and sealed in st and returns a
// repository over each, the second through an encrypting store, and one
// more over sealed whose codec keeps no content key (KeyCacheSize -1).
func benchReposOn(b *testing.B, st store.Store, plainName, sealedName string) (plain, enc, nocache *mapper.Repository[benchRow]) {
	ctx := context.Background()
	for _, n := range []string{plainName, sealedName} {
		if err := st.CreateTable(ctx, n); err != nil {
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
	nc, err := encryption.NewCodec(encryption.Config{Key: key, Properties: props, KeyCacheSize: -1})
	if err != nil {
		b.Fatal(err)
	}
	return mapper.NewRepository[benchRow](st, plainName), mapper.NewRepository[benchRow](c.Store(st, sealedName), sealedName),
		mapper.NewRepository[benchRow](nc.Store(st, sealedName), sealedName)
}

func benchValue(i int) *benchRow {
	return &benchRow{PK: "p", RK: fmt.Sprintf("%09d", i), Name: "Ada Lovelace", Email: "ada@example.com", Phone: "+44 20 7946 0000",
		City: "London", Zip: "W1", Age: 36, Score: 9.5, Flag: true, Count: 1815, Note: "analytical engine"}
}

// BenchmarkEncryptInterleaved measures a typed insert of a 10-property
// entity with 3 encrypted strings against the same insert unencrypted,
// and a typed point read likewise (with the codec's content key cache,
// and without it), interleaved on memstore.
func BenchmarkEncryptInterleaved(b *testing.B) {
	plain, enc, nocache := benchReposOn(b, memstore.New(), "Plain", "Sealed")
	benchEncrypt(b, interleave.Config{CollectGarbage: true}, 1000, plain, enc, nocache)
}

// BenchmarkEncryptAzurite is BenchmarkEncryptInterleaved against
// Azurite, through azstore: the path users take, where a request costs
// the client far more CPU than a memstore call. Run it with
//
//	scripts/with-azurite.sh go test -run '^$' -bench '^BenchmarkEncryptAzurite$' -benchtime 1x ./encryption/
func BenchmarkEncryptAzurite(b *testing.B) {
	st, err := azstore.NewFromConnectionString(azuritetest.Conn(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	suffix := fmt.Sprint(time.Now().UnixNano() % 1e9)
	plainName, sealedName := "encplain"+suffix, "encsealed"+suffix
	b.Cleanup(func() {
		_ = st.DeleteTable(context.Background(), plainName)
		_ = st.DeleteTable(context.Background(), sealedName)
	})
	plain, enc, nocache := benchReposOn(b, st, plainName, sealedName)
	benchEncrypt(b, interleave.Config{Rounds: 25, Slice: 150 * time.Millisecond, CollectGarbage: true}, 200, plain, enc, nocache)
}

// benchEncrypt inserts n entities into each table, then measures inserts
// and point reads of them (reads cycle over the n).
func benchEncrypt(b *testing.B, cfg interleave.Config, n int, plain, enc, nocache *mapper.Repository[benchRow]) {
	ctx := context.Background()
	for i := range n {
		if err := plain.Insert(ctx, benchValue(-1-i)); err != nil {
			b.Fatal(err)
		}
		if err := enc.Insert(ctx, benchValue(-1-i)); err != nil {
			b.Fatal(err)
		}
	}
	insert := func(r *mapper.Repository[benchRow], lane int) func(int) error {
		return func(i int) error { return r.Insert(ctx, benchValue(lane*1e8+i)) }
	}
	get := func(r *mapper.Repository[benchRow]) func(int) error {
		return func(i int) error {
			v, err := r.Get(ctx, "p", fmt.Sprintf("%09d", -1-i%n))
			if err == nil && v.Name != "Ada Lovelace" {
				err = fmt.Errorf("read %q", v.Name)
			}
			return err
		}
	}
	b.ResetTimer()
	for _, bc := range []struct {
		name  string
		cases []interleave.Case
	}{
		{"insert", []interleave.Case{{Name: "plain insert", Op: insert(plain, 0)}, {Name: "encrypted insert", Op: insert(enc, 0)}}},
		{"get", []interleave.Case{{Name: "plain get", Op: get(plain)}, {Name: "decrypted get", Op: get(enc)},
			{Name: "decrypted get, no key cache", Op: get(nocache)}}},
	} {
		rep, err := interleave.Measure(cfg, bc.cases[0], bc.cases[1:]...)
		if err != nil {
			b.Fatal(err)
		}
		row, _ := rep.Row(bc.cases[1].Name)
		b.ReportMetric(row.CPURatio.Median, "x-cpu-"+bc.name)
		b.ReportMetric(row.WallRatio.Median, "x-wall-"+bc.name)
		if len(bc.cases) > 2 {
			row, _ := rep.Row(bc.cases[2].Name)
			b.ReportMetric(row.CPURatio.Median, "x-cpu-"+bc.name+"-nocache")
		}
		fmt.Printf("%s %s\n%s\n", b.Name(), bc.name, rep.Table())
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
