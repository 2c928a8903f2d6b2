package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// timestampSource is a store.PropertySource that writes a custom property
// A and a property named Timestamp, in name order.
type timestampSource struct {
	a, ts store.PropertyName
	at    time.Time
}

func (s timestampSource) WriteProperties(w store.PropertyWriter) error {
	if err := w.Int32(s.a, 1); err != nil {
		return err
	}
	return w.Time(s.ts, s.at)
}

// timestampProperty proves that a property named Timestamp in a write is
// accepted and ignored, as the service accepts it (204) and keeps its own
// Timestamp: on every write of the map lane (store.Entity), alone and in a
// transaction, and of the typed lane (store.TypedTable.Write and Transact
// with a PropertySource). The entity read back has no such custom
// property, the service's Timestamp, and the other properties written.
func (s *suite) timestampProperty(t *testing.T) {
	fake := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	check := func(t *testing.T, tbl store.Table, what, rk string, etag store.ETag) {
		t.Helper()
		got := mustGet(t, tbl, "p", rk)
		if got.Timestamp.Equal(fake) || got.Timestamp.Before(time.Now().Add(-time.Hour)) {
			t.Errorf("%s: Timestamp read back %s: the service's own was not kept", what, got.Timestamp)
		}
		wantProps(t, what, got.Properties, map[string]any{"A": int32(1)})
		if etag != "" && got.ETag != etag {
			t.Errorf("%s: returned ETag %s, read back %s", what, etag, got.ETag)
		}
	}
	withTS := func(rk string) store.Entity { return ent("p", rk, "A", int32(1), "Timestamp", fake) }

	s.run(t, "TimestampProperty_Ignored", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		etag, err := tbl.Insert(ctx, withTS("ins"))
		must(t, err, "Insert with a Timestamp property")
		check(t, tbl, "Insert", "ins", etag)
		for i, w := range []struct {
			name string
			do   func() (store.ETag, error)
		}{
			{"Update merge", func() (store.ETag, error) { return tbl.Update(ctx, withTS("ins"), store.Merge, store.ETagAny) }},
			{"Update replace", func() (store.ETag, error) { return tbl.Update(ctx, withTS("ins"), store.Replace, etag) }},
			{"Upsert merge", func() (store.ETag, error) { return tbl.Upsert(ctx, withTS("ins"), store.Merge) }},
			{"Upsert replace", func() (store.ETag, error) { return tbl.Upsert(ctx, withTS("ins"), store.Replace) }},
			{"Upsert merge (new)", func() (store.ETag, error) { return tbl.Upsert(ctx, withTS("um"), store.Merge) }},
			{"Upsert replace (new)", func() (store.ETag, error) { return tbl.Upsert(ctx, withTS("ur"), store.Replace) }},
		} {
			e, err := w.do()
			if !must2(t, err, w.name) {
				continue
			}
			rk := []string{"ins", "ins", "ins", "ins", "um", "ur"}[i]
			check(t, tbl, w.name, rk, e)
			if rk == "ins" {
				etag = e
			}
		}
		res, err := tbl.Transact(ctx, []store.Action{
			{Kind: store.ActionInsert, Entity: withTS("t1")},
			{Kind: store.ActionUpsertMerge, Entity: withTS("t2")},
			{Kind: store.ActionUpdateReplace, Entity: withTS("ins"), IfMatch: store.ETagAny},
		})
		if must2(t, err, "Transact") {
			check(t, tbl, "transaction insert", "t1", res[0].ETag)
			check(t, tbl, "transaction upsert", "t2", res[1].ETag)
			check(t, tbl, "transaction update", "ins", res[2].ETag)
		}
		// A Timestamp property does not count toward the 252.
		full := ent("p", "full")
		full.Properties = props(store.MaxCustomProperties)
		full.Properties["Timestamp"] = fake
		if _, err := tbl.Insert(ctx, full); must2(t, err, "252 properties and a Timestamp") {
			if n := len(mustGet(t, tbl, "p", "full").Properties); n != store.MaxCustomProperties {
				t.Errorf("read back %d properties, want %d", n, store.MaxCustomProperties)
			}
		}
	})

	s.run(t, "TimestampProperty_IgnoredTyped", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tt, ok := driver.Typed(tbl)
		if !ok {
			t.Skip("the table has no typed lane (store.TypedTable)")
		}
		ctx := t.Context()
		a, err := store.NewPropertyName("A")
		must(t, err, "NewPropertyName(A)")
		ts, err := store.NewPropertyName("Timestamp")
		if !must2(t, err, `NewPropertyName("Timestamp")`) {
			return
		}
		src := timestampSource{a: a, ts: ts, at: fake}
		keys := func(rk string) store.Entity { return store.Entity{PartitionKey: "p", RowKey: rk} }
		for i, kind := range []store.ActionKind{store.ActionInsert, store.ActionUpdateMerge, store.ActionUpdateReplace, store.ActionUpsertMerge, store.ActionUpsertReplace} {
			act := store.Action{Kind: kind, Entity: keys("w"), Source: src}
			if kind.NeedsIfMatch() {
				act.IfMatch = store.ETagAny
			}
			etag, err := tt.Write(ctx, act)
			if must2(t, err, fmt.Sprintf("Write %s (%d)", kind, i)) {
				check(t, tbl, "typed "+kind.String(), "w", etag)
			}
		}
		res, err := tt.Transact(ctx, []store.Action{
			{Kind: store.ActionInsert, Entity: keys("t1"), Source: src},
			{Kind: store.ActionUpsertMerge, Entity: keys("t2"), Source: src},
			{Kind: store.ActionUpdateReplace, Entity: keys("w"), Source: src, IfMatch: store.ETagAny},
		})
		if must2(t, err, "typed Transact") {
			check(t, tbl, "typed transaction insert", "t1", res[0].ETag)
			check(t, tbl, "typed transaction upsert", "t2", res[1].ETag)
			check(t, tbl, "typed transaction update", "w", res[2].ETag)
		}
	})
}

// must2 reports err as a test error (not fatal) and whether it was nil.
func must2(t testing.TB, err error, what string) bool {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return false
	}
	return true
}
