package localstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// TestReopenKeepsEntitiesTimestampsAndETags saves a store, reopens it, and
// checks every value, Timestamp and ETag came back; a write at an ETag read
// before the reopen succeeds after it.
func TestReopenKeepsEntitiesTimestampsAndETags(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.CreateTable(ctx, "Empty")
	st.CreateTable(ctx, "Orders")
	tbl := st.Table("Orders")
	for i := range 50 {
		e := store.Entity{PartitionKey: "p" + string(rune('a'+i%5)), RowKey: fmt.Sprintf("r%02d", i), Properties: map[string]any{
			"N": int64(i), "D": float64(i), "T": time.Date(2026, 1, 1, 0, 0, 0, i*100, time.UTC),
		}}
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string]store.Entity{}
	for e, err := range store.All(ctx, tbl, store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		before[e.PartitionKey+"/"+e.RowKey] = e
	}
	if err := Save(ctx, dir, st); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 { // the snapshot only
		t.Errorf("the folder holds %d files: a temporary file was left", len(ents))
	}
	st2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := st2.ListTables(ctx, store.ListTablesOptions{}); len(p.Tables) != 2 {
		t.Errorf("tables after reopen: %v", p.Tables)
	}
	n := 0
	for e, err := range store.All(ctx, st2.Table("Orders"), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		b := before[e.PartitionKey+"/"+e.RowKey]
		if !e.Timestamp.Equal(b.Timestamp) || e.ETag != b.ETag || len(e.Properties) != 3 {
			t.Errorf("%s/%s: %v %s, want %v %s", e.PartitionKey, e.RowKey, e.Timestamp, e.ETag, b.Timestamp, b.ETag)
		}
		for k, v := range b.Properties {
			if !store.SameValue(v, e.Properties[k]) {
				t.Errorf("%s/%s %s: %v, want %v", e.PartitionKey, e.RowKey, k, e.Properties[k], v)
			}
		}
	}
	if n != 50 {
		t.Errorf("%d entities after reopen", n)
	}
	old := before["pa/r00"]
	if _, err := st2.Table("Orders").Update(ctx, store.Entity{PartitionKey: "pa", RowKey: "r00"}, store.Merge, old.ETag); err != nil {
		t.Errorf("an update at the ETag read before the reopen: %v", err)
	}
	// a new write after the reopen gets a later Timestamp than every reloaded one
	e, _ := st2.Table("Orders").Get(ctx, "pa", "r00", nil)
	if !e.Timestamp.After(old.Timestamp) {
		t.Errorf("new Timestamp %v not after %v", e.Timestamp, old.Timestamp)
	}
}

func TestDamagedSnapshotIsRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("{\"table\":\"Orders\"}\n{\"PartitionKey\":\"a\",\n"), 0o644)
	if _, err := Open(dir); err == nil {
		t.Fatal("a damaged snapshot opened")
	}
}

func TestLockKeepsASecondCommandOut(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir); err == nil {
		t.Skip("flock is not available here")
	}
	unlock()
	unlock2, err := Lock(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
}

// TestOpenRemovesAKilledSavesTemporaryFile: a save killed before its
// rename leaves a temporary file; the next Open removes it.
func TestOpenRemovesAKilledSavesTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, "."+FileName+"-123.tmp")
	if err := os.WriteFile(left, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the temporary file is still there: %v", err)
	}
}
