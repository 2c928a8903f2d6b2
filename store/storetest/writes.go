package storetest

import (
	"testing"

	"github.com/tablekit/tablekit/store"
)

// writes proves single-entity CRUD, merge versus replace, upserts, ETags
// and conditional writes.
func (s *suite) writes(t *testing.T) {
	s.run(t, "CRUD", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		tag := mustInsert(t, tbl, ent("p", "r", "A", "a", "N", int32(1)))
		got := mustGet(t, tbl, "p", "r")
		if got.PartitionKey != "p" || got.RowKey != "r" || got.ETag != tag || got.Timestamp.IsZero() {
			t.Errorf("Get = (%q, %q, ETag %s, Timestamp %s), want (p, r, ETag %s, a Timestamp)",
				got.PartitionKey, got.RowKey, got.ETag, got.Timestamp, tag)
		}
		wantProps(t, "after insert", got.Properties, map[string]any{"A": "a", "N": int32(1)})
		tag2, err := tbl.Update(ctx, ent("p", "r", "A", "b"), store.Replace, tag)
		must(t, err, "Update")
		wantProps(t, "after update", mustGet(t, tbl, "p", "r").Properties, map[string]any{"A": "b"})
		must(t, tbl.Delete(ctx, "p", "r", tag2), "Delete")
		wantMissing(t, tbl, "p", "r")
		wantEmpty(t, tbl)
	})

	s.run(t, "InsertExisting_EntityAlreadyExists", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tag := mustInsert(t, tbl, ent("p", "r", "A", "first"))
		_, err := tbl.Insert(t.Context(), ent("p", "r", "A", "second"))
		wantErr(t, err, store.CodeEntityAlreadyExists, 409, noIndex)
		got := mustGet(t, tbl, "p", "r")
		wantProps(t, "after the refused insert", got.Properties, map[string]any{"A": "first"})
		if got.ETag != tag {
			t.Errorf("refused insert changed the ETag from %s to %s", tag, got.ETag)
		}
	})

	s.run(t, "MissingEntity_ResourceNotFound", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "other"))
		ctx := t.Context()
		_, err := tbl.Get(ctx, "p", "r", nil)
		wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
		_, err = tbl.Get(ctx, "p", "r", &store.GetOptions{Select: []string{"A"}})
		wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
		for _, mode := range []store.UpdateMode{store.Merge, store.Replace} {
			_, err = tbl.Update(ctx, ent("p", "r", "A", "a"), mode, store.ETagAny)
			wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
		}
		err = tbl.Delete(ctx, "p", "r", store.ETagAny)
		wantErr(t, err, store.CodeResourceNotFound, 404, noIndex)
		wantKeys(t, tbl, key{"p", "other"})
	})

	s.run(t, "StaleETag_UpdateConditionNotSatisfied", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		old := mustInsert(t, tbl, ent("p", "r", "A", "v1"))
		cur, err := tbl.Update(ctx, ent("p", "r", "A", "v2"), store.Merge, old)
		must(t, err, "Update with the current ETag")
		for _, mode := range []store.UpdateMode{store.Merge, store.Replace} {
			_, err = tbl.Update(ctx, ent("p", "r", "A", "lost"), mode, old)
			wantErr(t, err, store.CodeUpdateConditionNotSatisfied, 412, noIndex)
		}
		err = tbl.Delete(ctx, "p", "r", old)
		wantErr(t, err, store.CodeUpdateConditionNotSatisfied, 412, noIndex)
		got := mustGet(t, tbl, "p", "r")
		wantProps(t, "after the refused writes", got.Properties, map[string]any{"A": "v2"})
		if got.ETag != cur {
			t.Errorf("refused writes changed the ETag from %s to %s", cur, got.ETag)
		}
		must(t, tbl.Delete(ctx, "p", "r", cur), "Delete with the current ETag")
		wantMissing(t, tbl, "p", "r")
	})

	s.run(t, "IfMatchAny_Unconditional", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		mustInsert(t, tbl, ent("p", "r", "A", "v1"))
		_, err := tbl.Update(ctx, ent("p", "r", "A", "v2"), store.Merge, store.ETagAny)
		must(t, err, "Update *")
		_, err = tbl.Update(ctx, ent("p", "r", "A", "v3"), store.Replace, store.ETagAny)
		must(t, err, "Update *")
		wantProps(t, "after Update *", mustGet(t, tbl, "p", "r").Properties, map[string]any{"A": "v3"})
		must(t, tbl.Delete(ctx, "p", "r", store.ETagAny), "Delete *")
		wantMissing(t, tbl, "p", "r")
	})

	s.run(t, "MalformedETag_InvalidInput", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		tag := mustInsert(t, tbl, ent("p", "r", "A", "v1"))
		for _, bad := range []store.ETag{"", "abc", `"unterminated`, `"a"b"`, `W/abc`, "**"} {
			_, err := tbl.Update(ctx, ent("p", "r", "A", "v2"), store.Merge, bad)
			if !wantErr(t, err, store.CodeInvalidInput, 400, noIndex) {
				t.Logf("ETag %q", bad)
			}
			err = tbl.Delete(ctx, "p", "r", bad)
			wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
		}
		got := mustGet(t, tbl, "p", "r")
		if got.ETag != tag {
			t.Errorf("refused writes changed the ETag from %s to %s", tag, got.ETag)
		}
	})

	s.run(t, "EveryWrite_NewETag", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		e := ent("p", "r", "A", "same")
		seen := map[store.ETag]string{}
		note := func(tag store.ETag, what string) {
			t.Helper()
			if tag == "" {
				t.Errorf("%s returned an empty ETag", what)
			}
			if prev, dup := seen[tag]; dup {
				t.Errorf("%s returned ETag %s, already returned by %s", what, tag, prev)
			}
			seen[tag] = what
			if got := mustGet(t, tbl, "p", "r"); got.ETag != tag {
				t.Errorf("%s returned ETag %s but Get reads %s", what, tag, got.ETag)
			}
		}
		note(mustInsert(t, tbl, e), "insert")
		for _, w := range []struct {
			what string
			do   func() (store.ETag, error)
		}{
			{"unchanged merge", func() (store.ETag, error) { return tbl.Update(ctx, e, store.Merge, store.ETagAny) }},
			{"unchanged replace", func() (store.ETag, error) { return tbl.Update(ctx, e, store.Replace, store.ETagAny) }},
			{"unchanged upsert-merge", func() (store.ETag, error) { return tbl.Upsert(ctx, e, store.Merge) }},
			{"unchanged upsert-replace", func() (store.ETag, error) { return tbl.Upsert(ctx, e, store.Replace) }},
		} {
			tag, err := w.do()
			must(t, err, w.what)
			note(tag, w.what)
		}
	})

	s.run(t, "MergeKeeps_ReplaceRemoves", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		mustInsert(t, tbl, ent("p", "r", "A", int32(1), "B", int32(2)))
		_, err := tbl.Update(ctx, ent("p", "r", "B", "three", "C", int32(4)), store.Merge, store.ETagAny)
		must(t, err, "merge")
		wantProps(t, "after merge", mustGet(t, tbl, "p", "r").Properties,
			map[string]any{"A": int32(1), "B": "three", "C": int32(4)})
		_, err = tbl.Update(ctx, ent("p", "r", "C", int64(5)), store.Replace, store.ETagAny)
		must(t, err, "replace")
		wantProps(t, "after replace", mustGet(t, tbl, "p", "r").Properties, map[string]any{"C": int64(5)})
		_, err = tbl.Update(ctx, ent("p", "r"), store.Replace, store.ETagAny)
		must(t, err, "replace with no properties")
		wantProps(t, "after an empty replace", mustGet(t, tbl, "p", "r").Properties, map[string]any{})
	})

	s.run(t, "Upsert_BothModes", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		// On a missing entity both modes insert.
		for _, c := range []struct {
			rk   string
			mode store.UpdateMode
		}{{"merge", store.Merge}, {"replace", store.Replace}} {
			tag, err := tbl.Upsert(ctx, ent("p", c.rk, "A", "a", "B", "b"), c.mode)
			must(t, err, "upsert-"+c.rk+" of a missing entity")
			got := mustGet(t, tbl, "p", c.rk)
			wantProps(t, "upsert-"+c.rk+" insert", got.Properties, map[string]any{"A": "a", "B": "b"})
			if got.ETag != tag {
				t.Errorf("upsert-%s returned ETag %s, Get reads %s", c.rk, tag, got.ETag)
			}
		}
		// On an existing entity merge keeps what it leaves out, replace drops it.
		_, err := tbl.Upsert(ctx, ent("p", "merge", "B", "b2", "C", "c"), store.Merge)
		must(t, err, "upsert-merge of an existing entity")
		wantProps(t, "upsert-merge update", mustGet(t, tbl, "p", "merge").Properties,
			map[string]any{"A": "a", "B": "b2", "C": "c"})
		_, err = tbl.Upsert(ctx, ent("p", "replace", "B", "b2", "C", "c"), store.Replace)
		must(t, err, "upsert-replace of an existing entity")
		wantProps(t, "upsert-replace update", mustGet(t, tbl, "p", "replace").Properties,
			map[string]any{"B": "b2", "C": "c"})
	})

	s.run(t, "GetSelect_Projection", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tag := mustInsert(t, tbl, ent("p", "r", "A", "a", "B", int32(2), "C", true))
		got, err := tbl.Get(t.Context(), "p", "r", &store.GetOptions{Select: []string{"A", "C", "Absent"}})
		must(t, err, "Get with Select")
		wantProps(t, "Get with Select", got.Properties, map[string]any{"A": "a", "C": true})
		if got.PartitionKey != "p" || got.RowKey != "r" || got.ETag != tag || got.Timestamp.IsZero() {
			t.Errorf("projected Get lost a system field: (%q, %q, ETag %s, Timestamp %s)",
				got.PartitionKey, got.RowKey, got.ETag, got.Timestamp)
		}
		// Selecting only system properties returns no custom ones.
		got, err = tbl.Get(t.Context(), "p", "r", &store.GetOptions{Select: []string{"RowKey"}})
		must(t, err, "Get with Select RowKey")
		wantProps(t, "Get with Select RowKey", got.Properties, map[string]any{})
		if got.RowKey != "r" || got.ETag != tag {
			t.Errorf("Get with Select RowKey = (%q, ETag %s)", got.RowKey, got.ETag)
		}
		_, err = tbl.Get(t.Context(), "p", "r", &store.GetOptions{Select: []string{"bad-name"}})
		wantErr(t, err, store.CodePropertyNameInvalid, 400, noIndex)
	})

	s.run(t, "ReadDoesNotAlias_StoredEntity", func(t *testing.T) {
		_, tbl := s.newTable(t)
		mustInsert(t, tbl, ent("p", "r", "A", "a"))
		got := mustGet(t, tbl, "p", "r")
		got.Properties["A"] = "changed"
		got.Properties["New"] = "x"
		wantProps(t, "after changing a read", mustGet(t, tbl, "p", "r").Properties, map[string]any{"A": "a"})
	})
}
