package mapper

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// rangeRow is a row of the range tests: only its keys matter.
type rangeRow struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

// rowKeys runs a partition query and returns the RowKeys in the order
// they came.
func rowKeys(t *testing.T, p *Partition[rangeRow], c Cond[rangeRow]) []string {
	t.Helper()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for v, err := range p.Query(context.Background(), c) {
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		got = append(got, v.RK)
	}
	return got
}

// keys.Between, Field.Between and InRange are half-open: the upper bound
// is excluded unless the range says UpperIncluded.
func TestInRangeExcludesUpperBound(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[rangeRow](t, memstore.WithShortPages(2))
	for _, rk := range []string{"empid_000099", "empid_000100", "empid_000150", "empid_000199",
		"empid_000199a", "empid_000200", "empid_000201", "empid_0002", "email_x"} {
		if err := r.Insert(ctx, &rangeRow{"p", rk}); err != nil {
			t.Fatal(err)
		}
	}
	p := r.Partition("p")
	// "empid_0002" is a prefix of the upper bound, so it sorts inside:
	// why ids are padded.
	half := []string{"empid_000100", "empid_000150", "empid_000199", "empid_000199a", "empid_0002"}
	rng := keys.Between("empid_000100", "empid_000200")
	for name, c := range map[string]Cond[rangeRow]{
		"InRange(keys.Between)": Where[rangeRow]("RowKey").InRange(rng),
		"Between":               Where[rangeRow]("RK").Between("empid_000100", "empid_000200"),
	} {
		if got := rowKeys(t, p, c); !slices.Equal(got, half) {
			t.Errorf("%s: %v, want %v", name, got, half)
		}
	}
	rng.UpperIncluded = true
	closed := append(slices.Clone(half), "empid_000200")
	if got := rowKeys(t, p, Where[rangeRow]("RowKey").InRange(rng)); !slices.Equal(got, closed) {
		t.Errorf("UpperIncluded: %v, want %v", got, closed)
	}
	// Adjacent half-open ranges cover each key exactly once.
	a := rowKeys(t, p, Where[rangeRow]("RowKey").InRange(keys.Between("empid_", "empid_000150")))
	b := rowKeys(t, p, Where[rangeRow]("RowKey").InRange(keys.Between("empid_000150", "empid`")))
	all := rowKeys(t, p, Where[rangeRow]("RowKey").InRange(keys.PrefixRange("empid_")))
	if !slices.Equal(append(a, b...), all) || len(all) != 8 {
		t.Errorf("adjacent ranges %v + %v, want %v", a, b, all)
	}
}

// For random keys (including characters whose UTF-8 and UTF-16 orders
// differ) and random ranges, a query with InRange returns exactly the keys
// keys.Range.Contains holds, in the service's order.
func inRangeMatchesContains(t *testing.T, st store.Store, table string, nKeys, nRanges int) {
	ctx := context.Background()
	r := NewRepository[rangeRow](st, table)
	g := newGen(41)
	var stored []string
	for len(stored) < nKeys {
		k := g.key()
		if slices.Contains(stored, k) {
			continue
		}
		if err := r.Insert(ctx, &rangeRow{"p", k}); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, k)
	}
	slices.SortFunc(stored, keys.Compare)
	p := r.Partition("p")
	partial := 0 // ranges holding some keys but not all: the ones that test the bounds
	for i := range nRanges {
		var rng keys.Range
		a, b := stored[g.r.IntN(len(stored))], g.key()
		switch i % 3 {
		case 0:
			rng = keys.Between(a, b)
		case 1:
			rng = keys.Between(a, stored[g.r.IntN(len(stored))])
			rng.UpperIncluded = g.coin()
		default:
			rs := []rune(a)
			rng = keys.PrefixRange(string(rs[:g.r.IntN(len(rs)+1)]))
		}
		var want []string
		for _, k := range stored {
			if rng.Contains(k) {
				want = append(want, k)
			}
		}
		got := rowKeys(t, p, Where[rangeRow]("RowKey").InRange(rng))
		if !slices.Equal(got, want) {
			t.Fatalf("range %s: query returned %q, Contains holds %q", rng, got, want)
		}
		if len(want) > 0 && len(want) < len(stored) {
			partial++
		}
	}
	if partial < nRanges/3 {
		t.Fatalf("only %d of %d ranges split the keys: the generator needs fixing", partial, nRanges)
	}
}

func TestInRangeMatchesContainsMemstore(t *testing.T) {
	st := memstore.New(memstore.WithShortPages(5))
	if err := st.CreateTable(context.Background(), "Ranges"); err != nil {
		t.Fatal(err)
	}
	inRangeMatchesContains(t, st, "Ranges", 200, 300)
}

func TestInRangeMatchesContainsAzurite(t *testing.T) {
	st := azuriteStore(t)
	table := fmt.Sprintf("MapperRanges%d", os.Getpid())
	if err := st.CreateTable(context.Background(), table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background(), table) })
	inRangeMatchesContains(t, st, table, 80, 60)
}
