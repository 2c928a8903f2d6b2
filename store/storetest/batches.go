package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// inserts makes n insert actions on partition pk with row keys r000, r001, ...
func inserts(pk string, n int) []store.Action {
	out := make([]store.Action, n)
	for i := range out {
		out[i] = store.Action{Kind: store.ActionInsert, Entity: ent(pk, fmt.Sprintf("r%03d", i), "I", int32(i))}
	}
	return out
}

// batches proves the entity group transaction rules.
func (s *suite) batches(t *testing.T) {
	s.run(t, "Size_1To100", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		_, err := tbl.Transact(ctx, nil)
		wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
		_, err = tbl.Transact(ctx, inserts("p", store.MaxBatchActions+1))
		wantErr(t, err, store.CodeInvalidInput, 400, noIndex)
		wantEmpty(t, tbl)

		res, err := tbl.Transact(ctx, inserts("p", store.MaxBatchActions))
		must(t, err, "transaction of 100")
		if len(res) != store.MaxBatchActions {
			t.Fatalf("transaction of 100 returned %d results", len(res))
		}
		all, _ := scanAll(t, tbl, store.Query{}, store.MaxPageSize)
		if len(all) != store.MaxBatchActions {
			t.Fatalf("transaction of 100 left %d entities", len(all))
		}
		for i, e := range all {
			if e.ETag != res[i].ETag {
				t.Errorf("action %d returned ETag %s, the entity has %s", i, res[i].ETag, e.ETag)
			}
		}
		res, err = tbl.Transact(ctx, inserts("q", 1))
		must(t, err, "transaction of 1")
		if len(res) != 1 || res[0].ETag == "" {
			t.Errorf("transaction of 1 returned %+v", res)
		}
	})

	s.run(t, "DifferentPartitions_CommandsInBatchActOnDifferentPartitions", func(t *testing.T) {
		_, tbl := s.newTable(t)
		acts := inserts("p", 3)
		acts[2].Entity.PartitionKey = "q"
		_, err := tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodeCommandsInBatchActOnDifferentPartitions, 400, 2)
		// Partition keys differing only in case are different partitions.
		acts = inserts("p", 2)
		acts[1].Entity.PartitionKey = "P"
		_, err = tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodeCommandsInBatchActOnDifferentPartitions, 400, 1)
		wantEmpty(t, tbl)
	})

	s.run(t, "DuplicateRow_InvalidDuplicateRow", func(t *testing.T) {
		_, tbl := s.newTable(t)
		acts := inserts("p", 3)
		acts = append(acts, store.Action{Kind: store.ActionUpsertMerge, Entity: ent("p", "r001", "X", "y")})
		_, err := tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodeInvalidDuplicateRow, 400, 3)
		wantEmpty(t, tbl)
		// Row keys differing only in case are different entities.
		acts = inserts("p", 2)
		acts[0].Entity.RowKey, acts[1].Entity.RowKey = "row", "ROW"
		_, err = tbl.Transact(t.Context(), acts)
		must(t, err, "transaction on row and ROW")
		wantKeys(t, tbl, key{"p", "ROW"}, key{"p", "row"})
	})

	s.run(t, "BodyTooLarge_RequestBodyTooLarge", func(t *testing.T) {
		_, tbl := s.newTable(t)
		// Five entities of about 800 KB each: every one valid, together
		// over 4 MiB.
		var acts []store.Action
		for i := range 5 {
			e := entityOfSize(t, "p", fmt.Sprint(i), 800*1024)
			acts = append(acts, store.Action{Kind: store.ActionUpsertReplace, Entity: e})
		}
		_, err := tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodeRequestBodyTooLarge, 413, noIndex)
		wantEmpty(t, tbl)

		// Text outside ASCII counts as the \uXXXX escapes it travels as:
		// 100 entities of 17,500 'é' (3.5 MB of UTF-8, 10.5 MB escaped)
		// are too large, 100 of 6,400 'é' or 3,200 '😀' are not.
		batch := func(s string) []store.Action {
			acts := make([]store.Action, 100)
			for i := range acts {
				acts[i] = store.Action{Kind: store.ActionInsert, Entity: ent("p", fmt.Sprint(i), "S", s)}
			}
			return acts
		}
		_, err = tbl.Transact(t.Context(), batch(strings.Repeat("é", 17500)))
		wantErr(t, err, store.CodeRequestBodyTooLarge, 413, noIndex)
		wantEmpty(t, tbl)
		_, err = tbl.Transact(t.Context(), batch(strings.Repeat("é", 6400)))
		must(t, err, "transaction of 100 entities of 6,400 'é'")
		for _, a := range batch(strings.Repeat("\U0001F600", 3200)) {
			must(t, tbl.Delete(t.Context(), "p", a.Entity.RowKey, store.ETagAny), "Delete")
		}
		_, err = tbl.Transact(t.Context(), batch(strings.Repeat("\U0001F600", 3200)))
		must(t, err, "transaction of 100 entities of 3,200 supplementary characters")
		got := mustGet(t, tbl, "p", "99")
		wantProps(t, "Get", got.Properties, map[string]any{"S": strings.Repeat("\U0001F600", 3200)})
	})

	s.run(t, "Atomic_FailingActionIndex", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		tag := mustInsert(t, tbl, ent("p", "exists", "A", "kept"))
		cases := []struct {
			name   string
			third  store.Action
			code   string
			status int
		}{
			{"insert existing", store.Action{Kind: store.ActionInsert, Entity: ent("p", "exists")},
				store.CodeEntityAlreadyExists, 409},
			{"update missing", store.Action{Kind: store.ActionUpdateMerge, Entity: ent("p", "missing"), IfMatch: store.ETagAny},
				store.CodeResourceNotFound, 404},
			{"delete missing", store.Action{Kind: store.ActionDelete, Entity: ent("p", "missing"), IfMatch: store.ETagAny},
				store.CodeResourceNotFound, 404},
			{"stale ETag", store.Action{Kind: store.ActionUpdateReplace, Entity: ent("p", "exists"), IfMatch: `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`},
				store.CodeUpdateConditionNotSatisfied, 412},
		}
		for _, c := range cases {
			acts := []store.Action{
				{Kind: store.ActionInsert, Entity: ent("p", "new1", "A", "a")},
				{Kind: store.ActionUpsertReplace, Entity: ent("p", "new2", "A", "a")},
				c.third,
				{Kind: store.ActionInsert, Entity: ent("p", "new3", "A", "a")},
			}
			res, err := tbl.Transact(ctx, acts)
			if !wantErr(t, err, c.code, c.status, 2) {
				t.Logf("case %s", c.name)
			}
			if res != nil {
				t.Errorf("%s: failed transaction returned results %+v", c.name, res)
			}
			wantKeys(t, tbl, key{"p", "exists"})
		}
		if got := mustGet(t, tbl, "p", "exists"); got.ETag != tag {
			t.Errorf("failed transactions changed the ETag from %s to %s", tag, got.ETag)
		}
	})

	s.run(t, "InvalidActionInBatch_Index", func(t *testing.T) {
		_, tbl := s.newTable(t)
		acts := inserts("p", 4)
		acts[2].Entity.Properties["bad-name"] = "x"
		_, err := tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodePropertyNameInvalid, 400, 2)
		acts = inserts("p", 4)
		acts[1] = store.Action{Kind: store.ActionUpdateMerge, Entity: ent("p", "r001"), IfMatch: ""}
		_, err = tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodeInvalidInput, 400, 1)
		acts = inserts("p", 4)
		acts[3].Kind = store.ActionKind(99)
		_, err = tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodeInvalidInput, 400, 3)
		acts = inserts("p", 4)
		acts[1].Entity.Properties["Big"] = make([]byte, store.MaxBinaryBytes+1)
		_, err = tbl.Transact(t.Context(), acts)
		wantErr(t, err, store.CodePropertyValueTooLarge, 400, 1)
		wantEmpty(t, tbl)
	})

	s.run(t, "MixedKinds_AllApplied", func(t *testing.T) {
		_, tbl := s.newTable(t)
		ctx := t.Context()
		tags := map[string]store.ETag{}
		for _, rk := range []string{"merge", "replace", "delete", "umerge", "ureplace"} {
			tags[rk] = mustInsert(t, tbl, ent("p", rk, "Old", "o", "Keep", rk))
		}
		acts := []store.Action{
			{Kind: store.ActionInsert, Entity: ent("p", "insert", "New", "n")},
			{Kind: store.ActionUpdateMerge, Entity: ent("p", "merge", "New", "n"), IfMatch: tags["merge"]},
			{Kind: store.ActionUpdateReplace, Entity: ent("p", "replace", "New", "n"), IfMatch: store.ETagAny},
			{Kind: store.ActionDelete, Entity: ent("p", "delete"), IfMatch: tags["delete"]},
			{Kind: store.ActionUpsertMerge, Entity: ent("p", "umerge", "New", "n")},
			{Kind: store.ActionUpsertReplace, Entity: ent("p", "ureplace", "New", "n")},
			{Kind: store.ActionUpsertMerge, Entity: ent("p", "uinsert", "New", "n")},
		}
		res, err := tbl.Transact(ctx, acts)
		must(t, err, "mixed transaction")
		if len(res) != len(acts) {
			t.Fatalf("got %d results for %d actions", len(res), len(acts))
		}
		wantKeys(t, tbl, key{"p", "insert"}, key{"p", "merge"}, key{"p", "replace"},
			key{"p", "uinsert"}, key{"p", "umerge"}, key{"p", "ureplace"})
		want := map[string]map[string]any{
			"insert":   {"New": "n"},
			"merge":    {"Old": "o", "Keep": "merge", "New": "n"},
			"replace":  {"New": "n"},
			"umerge":   {"Old": "o", "Keep": "umerge", "New": "n"},
			"ureplace": {"New": "n"},
			"uinsert":  {"New": "n"},
		}
		for i, a := range acts {
			rk := a.Entity.RowKey
			if a.Kind == store.ActionDelete {
				if res[i].ETag != "" {
					t.Errorf("delete returned ETag %s", res[i].ETag)
				}
				continue
			}
			got := mustGet(t, tbl, "p", rk)
			wantProps(t, rk, got.Properties, want[rk])
			if res[i].ETag == "" || res[i].ETag != got.ETag || res[i].ETag == tags[rk] {
				t.Errorf("action %d (%s) returned ETag %s; entity has %s, had %s", i, a.Kind, res[i].ETag, got.ETag, tags[rk])
			}
		}
	})
}
