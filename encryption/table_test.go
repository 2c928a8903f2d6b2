package encryption

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

const secret = "s3cr3t-plaintext-value"

func allTypes() map[string]any {
	return map[string]any{
		"S":     secret,
		"B":     []byte{0, 1, 2, 255},
		"Empty": "",
		"T":     true,
		"I32":   int32(-7),
		"I64":   int64(math.MaxInt64),
		"D":     1.5,
		"When":  time.Date(1999, 12, 31, 23, 59, 59, 123456700, time.UTC),
		"G":     store.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		"Plain": "visible",
	}
}

var encrypted = []string{"B", "D", "Empty", "G", "I32", "I64", "S", "T", "When"}

func setup(t *testing.T) (raw, enc store.Table, ms *memstore.Store) {
	t.Helper()
	ms = memstore.New()
	ctx := context.Background()
	if err := ms.CreateTable(ctx, "Secrets"); err != nil {
		t.Fatal(err)
	}
	raw = ms.Table("Secrets")
	enc, err := NewTable(raw, Config{Key: testKey(t, "kek-1", 1), Properties: encrypted})
	if err != nil {
		t.Fatal(err)
	}
	return raw, enc, ms
}

func TestRoundTripEveryType(t *testing.T) {
	ctx := context.Background()
	raw, enc, _ := setup(t)
	if _, ok := driver.Typed(enc); !ok {
		t.Fatal("the encrypting table of a typed table lost the typed lane")
	}
	if _, err := enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r", Properties: allTypes()}); err != nil {
		t.Fatal(err)
	}
	stored, err := raw.Get(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range encrypted {
		if _, ok := stored.Properties[n].([]byte); !ok {
			t.Errorf("%s stored as %T, not binary", n, stored.Properties[n])
		}
	}
	if stored.Properties["Plain"] != "visible" {
		t.Errorf("Plain stored as %v", stored.Properties["Plain"])
	}
	if _, ok := stored.Properties[MetadataProperty].(string); !ok {
		t.Fatalf("no %s: %v", MetadataProperty, stored.Properties)
	}
	check := func(name string, got store.Entity) {
		t.Helper()
		want := allTypes()
		if len(got.Properties) != len(want) {
			t.Errorf("%s: %d properties, want %d: %v", name, len(got.Properties), len(want), got.Properties)
		}
		for k, v := range want {
			if !store.SameValue(got.Properties[k], v) {
				t.Errorf("%s: %s = %#v, want %#v", name, k, got.Properties[k], v)
			}
		}
	}
	got, err := enc.Get(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("Get", got)
	var b driver.EntityBuilder
	if err := enc.(store.TypedTable).GetInto(ctx, "p", "r", nil, &b); err != nil {
		t.Fatal(err)
	}
	check("GetInto", b.Entity)
	page, err := enc.Query(ctx, store.Query{})
	if err != nil || len(page.Entities) != 1 {
		t.Fatalf("Query: %v, %v", page, err)
	}
	check("Query", page.Entities[0])
	sel, err := enc.Get(ctx, "p", "r", &store.GetOptions{Select: []string{"S"}})
	if err != nil || sel.Properties["S"] != secret || len(sel.Properties) != 1 {
		t.Fatalf("Get with Select: %v, %v", sel.Properties, err)
	}
}

func TestTypedWriteAndQueryInto(t *testing.T) {
	ctx := context.Background()
	raw, enc, _ := setup(t)
	tt := enc.(store.TypedTable)
	for i := range 3 {
		e := store.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: allTypes()}
		src := mapSource(e.Properties)
		if _, err := tt.Write(ctx, store.Action{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "p", RowKey: e.RowKey}, Source: src}); err != nil {
			t.Fatal(err)
		}
	}
	stored, _ := raw.Get(ctx, "p", "1", nil)
	if _, ok := stored.Properties["S"].([]byte); !ok {
		t.Fatalf("typed write stored S as %T", stored.Properties["S"])
	}
	var got []*driver.EntityBuilder
	_, n, err := tt.QueryInto(ctx, store.Query{}, func() store.EntityReader {
		b := &driver.EntityBuilder{}
		got = append(got, b)
		return b
	})
	if err != nil || n != 3 {
		t.Fatalf("QueryInto: %d, %v", n, err)
	}
	for _, b := range got {
		if b.Entity.Properties["S"] != secret || b.Entity.Properties["I32"] != int32(-7) {
			t.Fatalf("QueryInto entity %s: %v", b.Entity.RowKey, b.Entity.Properties)
		}
		if _, ok := b.Entity.Properties[MetadataProperty]; ok {
			t.Fatal("the metadata reached the reader")
		}
	}
}

// mapSource writes a map as a PropertySource, in name order.
type mapSource map[string]any

func (m mapSource) WriteProperties(w store.PropertyWriter) error {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sortStrings(names)
	for _, k := range names {
		n, err := store.NewPropertyName(k)
		if err != nil {
			return err
		}
		if err := store.WriteValue(w, n, m[k]); err != nil {
			return err
		}
	}
	return nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// refused checks that err matches ErrDecrypt and leaks nothing.
func refused(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrDecrypt) {
		t.Fatalf("%s: %v, want an error matching ErrDecrypt", what, err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\x01\x01\x01") {
		t.Fatalf("%s: the error leaks: %v", what, err)
	}
	t.Logf("%s: %v", what, err)
}

func TestTamperingRefused(t *testing.T) {
	ctx := context.Background()
	raw, enc, ms := setup(t)
	for _, rk := range []string{"a", "b"} {
		if _, err := enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: rk, Properties: allTypes()}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := raw.Get(ctx, "p", "a", nil)
	b, _ := raw.Get(ctx, "p", "b", nil)
	put := func(e store.Entity) {
		t.Helper()
		e.ETag = ""
		if _, err := raw.Upsert(ctx, e, store.Replace); err != nil {
			t.Fatal(err)
		}
	}
	restore := func() { put(a.Clone()); put(b.Clone()) }

	t.Run("a changed ciphertext byte", func(t *testing.T) {
		defer restore()
		e := a.Clone()
		ct := e.Properties["S"].([]byte)
		ct[len(ct)-20] ^= 0x40
		put(e)
		_, err := enc.Get(ctx, "p", "a", nil)
		refused(t, "tampered", err)
		var de *DecryptError
		if !errors.As(err, &de) || de.Property != "S" {
			t.Fatalf("the error does not name S: %v", err)
		}
	})
	t.Run("a value swapped between rows", func(t *testing.T) {
		defer restore()
		e := a.Clone()
		e.Properties["S"] = b.Clone().Properties["S"]
		put(e)
		_, err := enc.Get(ctx, "p", "a", nil)
		refused(t, "swapped rows", err)
	})
	t.Run("a whole entity moved to another row", func(t *testing.T) {
		defer restore()
		e := a.Clone()
		e.RowKey = "c"
		put(e)
		_, err := enc.Get(ctx, "p", "c", nil)
		refused(t, "moved row", err)
	})
	t.Run("values swapped between properties", func(t *testing.T) {
		defer restore()
		e := a.Clone()
		e.Properties["S"], e.Properties["Empty"] = e.Properties["Empty"], e.Properties["S"]
		put(e)
		_, err := enc.Get(ctx, "p", "a", nil)
		refused(t, "swapped properties", err)
	})
	t.Run("an entity copied to another table", func(t *testing.T) {
		if err := ms.CreateTable(ctx, "Other"); err != nil {
			t.Fatal(err)
		}
		e := a.Clone()
		e.ETag = ""
		if _, err := ms.Table("Other").Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		other, _ := NewTable(ms.Table("Other"), Config{Key: testKey(t, "kek-1", 1), Properties: encrypted})
		_, err := other.Get(ctx, "p", "a", nil)
		refused(t, "other table", err)
	})
	t.Run("a wrong key", func(t *testing.T) {
		wrong, _ := NewTable(raw, Config{Key: testKey(t, "kek-1", 9), Properties: encrypted})
		_, err := wrong.Get(ctx, "p", "a", nil)
		refused(t, "wrong key", err)
		unknown, _ := NewTable(raw, Config{Key: testKey(t, "kek-2", 1), Properties: encrypted})
		_, err = unknown.Get(ctx, "p", "a", nil)
		refused(t, "unknown key id", err)
		if !errors.Is(err, ErrKeyNotFound) {
			t.Fatalf("unknown key id: %v", err)
		}
	})
	t.Run("a missing metadata property", func(t *testing.T) {
		defer restore()
		e := a.Clone()
		delete(e.Properties, MetadataProperty)
		put(e)
		_, err := enc.Get(ctx, "p", "a", nil)
		refused(t, "missing metadata", err)
		var bld driver.EntityBuilder
		refused(t, "missing metadata, typed", enc.(store.TypedTable).GetInto(ctx, "p", "a", nil, &bld))
	})
	t.Run("a property stored in plain text", func(t *testing.T) {
		defer restore()
		e := a.Clone()
		e.Properties["S"] = "replaced in plain text"
		put(e)
		_, err := enc.Get(ctx, "p", "a", nil)
		refused(t, "plain text", err)
	})
	t.Run("a query page with a bad entity", func(t *testing.T) {
		defer restore()
		e := b.Clone()
		e.Properties["S"] = a.Clone().Properties["S"]
		put(e)
		_, err := enc.Query(ctx, store.Query{})
		refused(t, "Query", err)
		_, n, err := enc.(store.TypedTable).QueryInto(ctx, store.Query{}, func() store.EntityReader { return &driver.EntityBuilder{} })
		refused(t, "QueryInto", err)
		if n != 0 {
			t.Fatalf("QueryInto handed over %d entities with an error", n)
		}
	})
}

func TestRequestsRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	_, enc, _ := setup(t)
	e := store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": secret}}
	if _, err := enc.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"S eq 'x'", "Plain eq 'a' or not (I32 gt 3)", "TkEnc ne ''"} {
		_, err := enc.Query(ctx, store.Query{Filter: f})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "encrypted") {
			t.Fatalf("filter %q: %v", f, err)
		}
		_, _, err = enc.(store.TypedTable).QueryInto(ctx, store.Query{Filter: f}, func() store.EntityReader { return &driver.EntityBuilder{} })
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Fatalf("QueryInto filter %q: %v", f, err)
		}
	}
	if _, err := enc.Query(ctx, store.Query{Filter: "Plain eq 'a'"}); err != nil {
		t.Fatalf("a filter on a plain property: %v", err)
	}
	if _, err := enc.Update(ctx, e, store.Merge, store.ETagAny); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "Replace") {
		t.Fatalf("merge: %v", err)
	}
	if _, err := enc.Upsert(ctx, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Plain": "x"}}, store.Merge); err != nil {
		t.Fatalf("a merge of plain properties: %v", err)
	}
	if got, err := enc.Get(ctx, "p", "r", nil); err != nil || got.Properties["S"] != secret || got.Properties["Plain"] != "x" {
		t.Fatalf("after a plain merge: %v, %v", got.Properties, err)
	}
	_, err := enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "x", Properties: map[string]any{MetadataProperty: "forged"}})
	if !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("a reserved property: %v", err)
	}
	_, err = enc.Transact(ctx, []store.Action{
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "t1", Properties: map[string]any{"S": "a"}}},
		{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "t2", Properties: map[string]any{"S": "b"}}},
	})
	if !errors.Is(err, store.ErrInvalidInput) || store.Index(err) != 1 {
		t.Fatalf("a transaction with a merge: %v", err)
	}
}

func TestTransactEncrypts(t *testing.T) {
	ctx := context.Background()
	raw, enc, _ := setup(t)
	_, err := enc.Transact(ctx, []store.Action{
		{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"S": "one"}}},
		{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "p", RowKey: "2"}, Source: mapSource{"S": "two", "I32": int32(2)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for rk, want := range map[string]string{"1": "one", "2": "two"} {
		s, _ := raw.Get(ctx, "p", rk, nil)
		if _, ok := s.Properties["S"].([]byte); !ok {
			t.Fatalf("row %s stored S as %T", rk, s.Properties["S"])
		}
		g, err := enc.Get(ctx, "p", rk, nil)
		if err != nil || g.Properties["S"] != want {
			t.Fatalf("row %s: %v, %v", rk, g.Properties, err)
		}
	}
}

func TestRewrap(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	_ = ms.CreateTable(ctx, "Rotated")
	raw := ms.Table("Rotated")
	old, next := testKey(t, "kek-old", 1), testKey(t, "kek-new", 2)
	w, _ := NewTable(raw, Config{Key: old, Properties: []string{"S"}})
	wl, _ := NewTable(raw, Config{Key: old, Properties: []string{"S"}, Legacy: true})
	for i := range 5 {
		tbl := w
		if i == 4 {
			tbl = wl
		}
		if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: map[string]any{"S": fmt.Sprint("v", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = raw.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "plain", Properties: map[string]any{"X": "y"}})
	before, _ := raw.Get(ctx, "p", "2", nil)
	res, err := Rewrap(ctx, raw, store.Query{}, NewKeyring(old, next), next)
	if err != nil || res.Rewrapped != 5 || res.Plain != 1 {
		t.Fatalf("Rewrap = %+v, %v", res, err)
	}
	after, _ := raw.Get(ctx, "p", "2", nil)
	if !bytes.Equal(before.Properties["S"].([]byte), after.Properties["S"].([]byte)) {
		t.Fatal("Rewrap changed the ciphertext")
	}
	if after.Properties[MetadataProperty] == before.Properties[MetadataProperty] {
		t.Fatal("Rewrap left the metadata")
	}
	onlyNew, _ := NewTable(raw, Config{Key: next, Properties: []string{"S"}})
	for i := range 5 {
		g, err := onlyNew.Get(ctx, "p", fmt.Sprint(i), nil)
		if err != nil || g.Properties["S"] != fmt.Sprint("v", i) {
			t.Fatalf("row %d under the new key alone: %v, %v", i, g.Properties, err)
		}
	}
	onlyOld, _ := NewTable(raw, Config{Key: old, Properties: []string{"S"}})
	_, err = onlyOld.Get(ctx, "p", "1", nil)
	refused(t, "old key after rotation", err)
	res, err = Rewrap(ctx, raw, store.Query{}, NewKeyring(old, next), next)
	if err != nil || res.Current != 5 || res.Rewrapped != 0 {
		t.Fatalf("second Rewrap = %+v, %v", res, err)
	}
}
