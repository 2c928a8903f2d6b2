package azstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// badInput is one row of the reference table: an operation that must fail
// with the same code and status on every backend.
type badInput struct {
	rule string
	op   func(ctx context.Context, st store.Store, tbl store.Table) error
}

func props(n int) map[string]any {
	m := make(map[string]any, n)
	for i := 0; i < n; i++ {
		m[fmt.Sprintf("P%03d", i)] = int32(i)
	}
	return m
}

func badInputs() []badInput {
	ins := func(e store.Entity) func(ctx context.Context, st store.Store, tbl store.Table) error {
		return func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Insert(ctx, e)
			return err
		}
	}
	long := strings.Repeat("k", store.MaxKeyUnits+1)
	return []badInput{
		{"TableName_BadChar", func(ctx context.Context, st store.Store, _ store.Table) error { return st.CreateTable(ctx, "bad-name") }},
		{"TableName_LeadingDigit", func(ctx context.Context, st store.Store, _ store.Table) error { return st.CreateTable(ctx, "1abc") }},
		{"TableName_TooShort", func(ctx context.Context, st store.Store, _ store.Table) error { return st.CreateTable(ctx, "ab") }},
		{"TableName_TooLong", func(ctx context.Context, st store.Store, _ store.Table) error {
			return st.CreateTable(ctx, "a"+strings.Repeat("b", 63))
		}},
		{"TableName_Reserved", func(ctx context.Context, st store.Store, _ store.Table) error { return st.CreateTable(ctx, "Tables") }},
		{"Key_TooLong", ins(store.Entity{PartitionKey: long, RowKey: "r"})},
		{"Key_Slash", ins(store.Entity{PartitionKey: "a/b", RowKey: "r"})},
		{"Key_Hash", ins(store.Entity{PartitionKey: "p", RowKey: "a#b"})},
		{"Key_Control", ins(store.Entity{PartitionKey: "p", RowKey: "a\tb"})},
		{"Props_TooMany", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: props(store.MaxCustomProperties + 1)})},
		{"PropName_TooLong", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{strings.Repeat("n", 256): "x"}})},
		{"PropName_Invalid", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"a-b": "x"}})},
		{"PropName_Reserved", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"ETag": "x"}})},
		{"String_TooLarge", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": strings.Repeat("s", store.MaxStringUnits+1)}})},
		{"Binary_TooLarge", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"B": make([]byte, store.MaxBinaryBytes+1)}})},
		{"DateTime_BeforeRange", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"T": time.Date(1600, 12, 31, 0, 0, 0, 0, time.UTC)}})},
		{"Value_UnsupportedType", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"I": 5}})},
		{"Entity_TooLarge", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: func() map[string]any {
			m := map[string]any{}
			for i := 0; i < 17; i++ {
				m[fmt.Sprintf("B%d", i)] = make([]byte, store.MaxBinaryBytes)
			}
			return m
		}()})},
		{"ETag_Malformed", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Update(ctx, store.Entity{PartitionKey: "p", RowKey: "r"}, store.Merge, "nope")
			return err
		}},
		{"ETag_Empty", func(ctx context.Context, _ store.Store, tbl store.Table) error { return tbl.Delete(ctx, "p", "r", "") }},
		{"Batch_Empty", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, nil)
			return err
		}},
		{"Batch_TooMany", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			acts := make([]store.Action, store.MaxBatchActions+1)
			for i := range acts {
				acts[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}}
			}
			_, err := tbl.Transact(ctx, acts)
			return err
		}},
		{"Batch_TwoPartitions", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p1", RowKey: "r"}},
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p2", RowKey: "r"}}})
			return err
		}},
		{"Batch_DuplicateRow", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "r"}},
				{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "r"}}})
			return err
		}},
		{"Batch_KeyWithSlash", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "a"}},
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "b/c"}}})
			return err
		}},
		{"Query_TopTooLarge", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Top: store.MaxPageSize + 1})
			return err
		}},
		{"Query_BadFilter", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Filter: "startswith(Name, 'a')"})
			return err
		}},
		{"Query_DoubleQuotes", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Filter: `Name eq "a"`})
			return err
		}},
		{"Query_TooManyComparisons", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			parts := make([]string, store.MaxFilterComparisons+1)
			for i := range parts {
				parts[i] = fmt.Sprintf("A eq %d", i)
			}
			_, err := tbl.Query(ctx, store.Query{Filter: strings.Join(parts, " or ")})
			return err
		}},
		{"Query_GarbageToken", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Continuation: "not-a-token"})
			return err
		}},
		{"Query_BadSelect", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Select: []string{"a b"}})
			return err
		}},
		{"Insert_Exists", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Insert(ctx, store.Entity{PartitionKey: "dup", RowKey: "r"})
			if err == nil {
				_, err = tbl.Insert(ctx, store.Entity{PartitionKey: "dup", RowKey: "r"})
			}
			return err
		}},
		{"Update_Missing", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Update(ctx, store.Entity{PartitionKey: "none", RowKey: "r"}, store.Replace, store.ETagAny)
			return err
		}},
		{"Get_Missing", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Get(ctx, "none", "r", nil)
			return err
		}},
		{"Batch_InsertExists_Index", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			if _, err := tbl.Insert(ctx, store.Entity{PartitionKey: "b", RowKey: "2"}); err != nil {
				return err
			}
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "b", RowKey: "1"}},
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "b", RowKey: "2"}}})
			return err
		}},
		{"Update_StaleETag", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			etag, err := tbl.Insert(ctx, store.Entity{PartitionKey: "s", RowKey: "r"})
			if err != nil {
				return err
			}
			if _, err := tbl.Update(ctx, store.Entity{PartitionKey: "s", RowKey: "r"}, store.Merge, etag); err != nil {
				return err
			}
			_, err = tbl.Update(ctx, store.Entity{PartitionKey: "s", RowKey: "r"}, store.Merge, etag)
			return err
		}},
		{"Entity_MissingTable", func(ctx context.Context, st store.Store, _ store.Table) error {
			_, err := st.Table("tkmissing").Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r"})
			return err
		}},
		{"DeleteTable_Missing", func(ctx context.Context, st store.Store, _ store.Table) error {
			return st.DeleteTable(ctx, "tkmissing")
		}},
		{"CreateTable_Exists", func(ctx context.Context, st store.Store, tbl store.Table) error {
			return st.CreateTable(ctx, strings.ToUpper(tbl.Name()))
		}},
		{"ListTables_TopTooLarge", func(ctx context.Context, st store.Store, _ store.Table) error {
			_, err := st.ListTables(ctx, store.ListTablesOptions{Top: store.MaxPageSize + 1})
			return err
		}},
		{"Queue_GetZero", func(ctx context.Context, st store.Store, tbl store.Table) error {
			_, err := st.Queue(strings.ToLower(tbl.Name())).Get(ctx, 0, time.Minute)
			return err
		}},
		{"Queue_VisibilityTooLong", func(ctx context.Context, st store.Store, tbl store.Table) error {
			_, err := st.Queue(strings.ToLower(tbl.Name())).Get(ctx, 1, store.MaxVisibilityTimeout+time.Second)
			return err
		}},
		{"Queue_MessageTooLarge", func(ctx context.Context, st store.Store, tbl store.Table) error {
			_, err := st.Queue(strings.ToLower(tbl.Name())).Put(ctx, make([]byte, store.MaxMessageSize+1), nil)
			return err
		}},
		{"Blob_NameTooLong", func(ctx context.Context, st store.Store, tbl store.Table) error {
			_, err := st.Container(strings.ToLower(tbl.Name())).Put(ctx, strings.Repeat("b", 1025), nil, nil)
			return err
		}},
		{"Blob_CreateOnlyExists", func(ctx context.Context, st store.Store, tbl store.Table) error {
			c := st.Container(strings.ToLower(tbl.Name()))
			if err := c.Create(ctx); err != nil {
				return err
			}
			defer c.Delete(context.Background())
			if _, err := c.Put(ctx, "b", []byte("1"), nil); err != nil {
				return err
			}
			_, err := c.Put(ctx, "b", []byte("2"), &store.BlobPutOptions{IfNoneMatchAny: true})
			return err
		}},
		{"Blob_StaleIfMatch", func(ctx context.Context, st store.Store, tbl store.Table) error {
			c := st.Container(strings.ToLower(tbl.Name()))
			if err := c.Create(ctx); err != nil {
				return err
			}
			defer c.Delete(context.Background())
			p, err := c.Put(ctx, "b", []byte("1"), nil)
			if err != nil {
				return err
			}
			if _, err := c.Put(ctx, "b", []byte("2"), nil); err != nil {
				return err
			}
			return c.DeleteBlob(ctx, "b", p.ETag)
		}},
		{"Blob_MissingContainer", func(ctx context.Context, st store.Store, tbl store.Table) error {
			_, _, err := st.Container(strings.ToLower(tbl.Name())+"x").Get(ctx, "b")
			return err
		}},
		// More of each rule's edges: every forbidden key character, the
		// upper DateTime bound, the batch body limit, conditional and
		// missing-entity deletes, malformed filters and projections.
		{"Key_Backslash", ins(store.Entity{PartitionKey: `a\b`, RowKey: "r"})},
		{"Key_Question", ins(store.Entity{PartitionKey: "p", RowKey: "a?b"})},
		{"Key_C1Control", ins(store.Entity{PartitionKey: "p", RowKey: "a\u0085b"})},
		{"Key_RowKeyTooLong", ins(store.Entity{PartitionKey: "p", RowKey: long})},
		{"PropName_LeadingDigit", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"1a": "x"}})},
		{"PropName_Empty", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"": "x"}})},
		{"PropName_ODataETag", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"odata.etag": "x"}})},
		{"DateTime_AfterRange", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"T": store.MaxTime.Add(100 * time.Nanosecond)}})},
		{"Value_Uint64", ins(store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"U": uint64(5)}})},
		{"Batch_BodyTooLarge", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			acts := make([]store.Action, 70)
			for i := range acts {
				acts[i] = store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i),
					Properties: map[string]any{"B": make([]byte, store.MaxBinaryBytes)}}}
			}
			_, err := tbl.Transact(ctx, acts)
			return err
		}},
		{"Batch_UnknownKind", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "a"}},
				{Kind: store.ActionKind(99), Entity: store.Entity{PartitionKey: "p", RowKey: "b"}}})
			return err
		}},
		{"Batch_PropertyTooLarge_Index", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "a"}},
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "b"}},
				{Kind: store.ActionUpsertReplace, Entity: store.Entity{PartitionKey: "p", RowKey: "c",
					Properties: map[string]any{"S": strings.Repeat("s", store.MaxStringUnits+1)}}}})
			return err
		}},
		{"Batch_DeleteMissing_Index", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Transact(ctx, []store.Action{
				{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "p", RowKey: "a"}},
				{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "gone"}, IfMatch: store.ETagAny}})
			return err
		}},
		{"Delete_Missing", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			return tbl.Delete(ctx, "none", "r", store.ETagAny)
		}},
		{"Merge_Missing", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Update(ctx, store.Entity{PartitionKey: "none", RowKey: "r"}, store.Merge, store.ETagAny)
			return err
		}},
		{"Delete_StaleETag", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			etag, err := tbl.Insert(ctx, store.Entity{PartitionKey: "d", RowKey: "r"})
			if err != nil {
				return err
			}
			if _, err := tbl.Upsert(ctx, store.Entity{PartitionKey: "d", RowKey: "r"}, store.Replace); err != nil {
				return err
			}
			return tbl.Delete(ctx, "d", "r", etag)
		}},
		{"Query_Unbalanced", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Filter: "(A eq 1"})
			return err
		}},
		{"Query_BadLiteral", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Filter: "A eq guid'nope'"})
			return err
		}},
		{"Query_NegativeTop", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Query(ctx, store.Query{Top: -1})
			return err
		}},
		{"Get_BadSelect", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Get(ctx, "p", "r", &store.GetOptions{Select: []string{"a-b"}})
			return err
		}},
		{"Get_KeyTooLong", func(ctx context.Context, _ store.Store, tbl store.Table) error {
			_, err := tbl.Get(ctx, "p", long, nil)
			return err
		}},
		{"Queue_GetTooMany", func(ctx context.Context, st store.Store, tbl store.Table) error {
			_, err := st.Queue(strings.ToLower(tbl.Name())).Get(ctx, store.MaxMessagesPerGet+1, time.Minute)
			return err
		}},
		{"Queue_BadName", func(ctx context.Context, st store.Store, _ store.Table) error {
			return st.Queue("Bad_Name").Create(ctx)
		}},
		{"Container_BadName", func(ctx context.Context, st store.Store, _ store.Table) error {
			return st.Container("-bad").Create(ctx)
		}},
	}
}

// TestErrorParity proves every bad input of the reference table fails
// with the same code, status and transaction index on azstore (over
// Azurite, which misses many of these rules) as on memstore.
func TestErrorParity(t *testing.T) {
	az := azuriteStore(t)
	mem := memstore.New()
	for i, bi := range badInputs() {
		t.Run(bi.rule, func(t *testing.T) {
			name := fmt.Sprintf("parity%dn%d", time.Now().UnixNano()%1e9, i)
			var got [2]*store.Error
			for j, st := range []store.Store{mem, az} {
				if err := st.CreateTable(t.Context(), name); err != nil {
					t.Fatal(err)
				}
				defer st.DeleteTable(context.Background(), name)
				err := bi.op(t.Context(), st, st.Table(name))
				se, ok := err.(*store.Error)
				if !ok {
					t.Fatalf("backend %d: error %v (%T) is not a *store.Error", j, err, err)
				}
				got[j] = se
			}
			m, a := got[0], got[1]
			if m.Code == "" || m.Code != a.Code || m.Status != a.Status || m.Index != a.Index {
				t.Errorf("memstore %s/%d at %d, azstore %s/%d at %d\nmemstore: %v\nazstore:  %v",
					m.Code, m.Status, m.Index, a.Code, a.Status, a.Index, m, a)
			}
		})
	}
}
