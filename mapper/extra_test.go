package mapper

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// empV2 is the newer version of a struct: it knows every property.
type empV2 struct {
	PK   string     `table:",pk"`
	RK   string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	A    string
	B    int64
	C    time.Time
	D    []byte
	E    store.GUID
	F    float64
	G    int32
	H    bool
}

// empV1 is an older version that knows only A, and keeps the rest in an
// extra field.
type empV1 struct {
	PK   string     `table:",pk"`
	RK   string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	A    string
	Rest map[string]any `table:",extra"`
}

// empV1Lossy is the same older version without an extra field: what the
// extra field protects against.
type empV1Lossy struct {
	PK   string     `table:",pk"`
	RK   string     `table:",rk"`
	ETag store.ETag `table:",etag"`
	A    string
}

// extraSurvivesReplace writes random entities with the newer struct,
// reads each with the older one (by Get and by Query), changes A and
// replaces it with its ETag, and checks that the newer struct reads back
// every property it wrote, with its type, A changed. The lossy older
// struct, replacing the same way, deletes them: the backend really drops
// what a Replace leaves out.
func extraSurvivesReplace(t *testing.T, st store.Store, table string, n int) {
	ctx := context.Background()
	r2 := NewRepository[empV2](st, table)
	r1 := NewRepository[empV1](st, table)
	g := newGen(31)
	var want []empV2
	for i := range n {
		v := empV2{PK: "p", RK: fmt.Sprintf("%03d", i), A: g.str(10), B: g.i64(), D: g.bytes(16),
			E: g.guid(), F: g.f64(), G: int32(g.i64()), H: g.coin()}
		if g.r.IntN(4) != 0 {
			v.C = g.when()
		}
		if err := r2.Insert(ctx, &v); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want = append(want, v)
	}
	for i := range want {
		old, err := r1.Get(ctx, "p", want[i].RK)
		if err != nil {
			t.Fatal(err)
		}
		old.A = fmt.Sprint("get-", i)
		if err := r1.Update(ctx, &old, store.Replace); err != nil {
			t.Fatalf("case %d: replace with the older struct: %v", i, err)
		}
		want[i].A, want[i].ETag = old.A, old.ETag
	}
	i := 0
	for old, err := range r1.Query(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		old.A = fmt.Sprint("query-", i)
		if err := r1.Update(ctx, &old, store.Replace); err != nil {
			t.Fatalf("%s: replace with the older struct: %v", old.RK, err)
		}
		want[i].A, want[i].ETag = old.A, old.ETag
		i++
	}
	if i != n {
		t.Fatalf("query returned %d entities, want %d", i, n)
	}
	for _, w := range want {
		got, err := r2.Get(ctx, "p", w.RK)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("after two replaces through the older struct:\n got %#v\nwant %#v", got, w)
		}
	}
	// Without an extra field the same replace loses every other property.
	lossy := NewRepository[empV1Lossy](st, table)
	old, err := lossy.Get(ctx, "p", want[0].RK)
	if err != nil {
		t.Fatal(err)
	}
	if err := lossy.Update(ctx, &old, store.Replace); err != nil {
		t.Fatal(err)
	}
	got, err := r2.Get(ctx, "p", want[0].RK)
	if err != nil {
		t.Fatal(err)
	}
	if got.B != 0 || got.G != 0 || got.D != nil || got.A != want[0].A {
		t.Fatalf("a replace without the extra field kept %+v", got)
	}
}

func TestExtraSurvivesReplaceMemstore(t *testing.T) {
	st := memstore.New(memstore.WithShortPages(3))
	if err := st.CreateTable(context.Background(), "Versions"); err != nil {
		t.Fatal(err)
	}
	extraSurvivesReplace(t, st, "Versions", 100)
}

func TestExtraSurvivesReplaceAzurite(t *testing.T) {
	st := azuriteStore(t)
	table := fmt.Sprintf("MapperExtra%d", os.Getpid())
	if err := st.CreateTable(context.Background(), table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background(), table) })
	extraSurvivesReplace(t, st, table, 40)
}
