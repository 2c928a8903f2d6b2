package large

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// refused checks that err is a refusal made before anything was sent,
// with code, naming every one of names.
func refused(t *testing.T, what string, err error, code string, names ...string) {
	t.Helper()
	var se *store.Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: %v: want a *store.Error", what, err)
	}
	if se.Code != code || !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("%s: %v: code %s, want %s", what, err, se.Code, code)
	}
	for _, n := range names {
		if !strings.Contains(err.Error(), n) {
			t.Fatalf("%s: %v: does not name %s", what, err, n)
		}
	}
}

// Values that cannot be stored even with blobs are refused before any
// request, naming the value and the limit; a missing container fails the
// write at its first blob put, before the entity is written.
func TestBadInputWritesNothing(t *testing.T) {
	type Wide struct {
		PK     string `table:",pk"`
		RK     string `table:",rk"`
		Body   string `table:",large"`
		A, B   string // not large
		C, D   string
		E, F   string
		G, H   string
		I, J   string
		K, L   string
		M, N   string
		O, P   string
		Q, R   string
		S, T   string
		U, V   string
		W, X   string
		Y, Z   string
		AA, AB string
		AC, AD string
		AE, AF string
		AG     string
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		ctx := t.Context()
		cnt := newCounting(b.Store)
		s := e.store(t, cnt, Options{})

		// A property that is not large, over the string limit.
		err := s.Put(ctx, &Doc{Folder: "f", ID: "1", Title: strings.Repeat("x", store.MaxStringUnits+1)})
		refused(t, "a long title", err, store.CodePropertyValueTooLarge, "Title", "32767")

		// Keys too long to name the blobs (each key is legal alone).
		long := strings.Repeat("k", 500)
		err = s.Put(ctx, &Doc{Folder: long, ID: long, Body: text(1, 100_000)})
		refused(t, "long keys", err, store.CodeKeyValueTooLarge, "Body", "1024")
		// The same keys with a small body need no blob: stored.
		if err := s.Put(ctx, &Doc{Folder: long, ID: long, Body: "small"}); err != nil {
			t.Fatalf("long keys, no blob: %v", err)
		}

		// Keys the service refuses.
		err = s.Put(ctx, &Doc{Folder: "a/b", ID: "1", Body: text(1, 100_000)})
		refused(t, "a key with a slash", err, store.CodeOutOfRangeInput, `"a/b"`)

		// Properties that are not large, over 1 MiB together.
		ws, err := New[Wide](cnt, e.table, e.container, &Options{Random: seeded()})
		if err != nil {
			t.Fatal(err)
		}
		w := Wide{PK: "w", RK: "1", Body: text(1, 1<<20)}
		v := text(2, 16_000)
		for _, f := range []*string{&w.A, &w.B, &w.C, &w.D, &w.E, &w.F, &w.G, &w.H, &w.I, &w.J, &w.K, &w.L, &w.M, &w.N, &w.O, &w.P,
			&w.Q, &w.R, &w.S, &w.T, &w.U, &w.V, &w.W, &w.X, &w.Y, &w.Z, &w.AA, &w.AB, &w.AC, &w.AD, &w.AE, &w.AF, &w.AG} {
			*f = v
		}
		err = ws.Put(ctx, &w)
		refused(t, "an entity too large without its large value", err, store.CodeEntityTooLarge, `"w"`, "1048576")

		if n := cnt.get("blob put") + cnt.get("insert") + cnt.get("update"); n != 1 {
			t.Fatalf("%d writes sent for refused values, want only the one stored", n)
		}
		if got := e.blobs(t); len(got) != 0 {
			t.Fatalf("blobs written for refused values: %v", got)
		}

		// A missing container: the first blob put fails; no entity.
		gone, err := New[Doc](b.Store, e.table, "no-such-container-large", &Options{Random: seeded()})
		if err != nil {
			t.Fatal(err)
		}
		err = gone.Put(ctx, &Doc{Folder: "f", ID: "nc", Body: text(1, 100_000)})
		if store.Code(err) != store.CodeContainerNotFound || !strings.Contains(err.Error(), "Store.Create") {
			t.Fatalf("a missing container: %v", err)
		}
		if _, ok := e.raw(t, "f", "nc"); ok {
			t.Fatal("the entity was written though its blob was not")
		}
		t.Logf("%s: %v", b.Name, err)

		// A value without the entity.
		if err := s.Put(ctx, nil); !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("nil: %v", err)
		}
	})
}

// New refuses what cannot work, naming it.
func TestNewRefuses(t *testing.T) {
	type Plain struct {
		PK, RK string `table:",pk"`
	}
	type NoLarge struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		X  string
	}
	st := backendtest.Memstore().Store
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"no large field", func() error { _, err := New[NoLarge](st, "Docs", "docs", nil); return err }(), "no field tagged large"},
		{"bad table", func() error { _, err := New[Doc](st, "a", "docs", nil); return err }(), "table"},
		{"bad container", func() error { _, err := New[Doc](st, "Docs", "Docs", nil); return err }(), "container"},
		{"threshold", func() error {
			_, err := New[Doc](st, "Docs", "docs", &Options{Threshold: MaxThreshold + 1})
			return err
		}(), "Threshold"},
		{"budget", func() error {
			_, err := New[Doc](st, "Docs", "docs", &Options{EntityBudget: store.MaxEntitySize + 1})
			return err
		}(), "EntityBudget"},
		{"unmappable", func() error { _, err := New[Plain](st, "Docs", "docs", nil); return err }(), "pk"},
	} {
		if c.err == nil || !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid-input error naming %s", c.name, c.err, c.want)
		}
	}
}
