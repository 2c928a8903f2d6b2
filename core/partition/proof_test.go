package partition_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/store"
)

// proofRows reads partition pk whole, straight from tbl: its data rows
// (RowKey to property V) and its outbox rows' bodies.
func proofRows(t testing.TB, tbl store.Table, pk string) (data map[string]string, outbox []string) {
	t.Helper()
	ctx := context.Background()
	data = map[string]string{}
	for e, err := range store.All(ctx, tbl, store.Query{Filter: partition.DataCond(pk).String()}) {
		if err != nil {
			t.Fatal(err)
		}
		v, _ := e.Properties["V"].(string)
		data[e.RowKey] = v
	}
	ob, err := partition.NewOutbox(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ob.Pending(ctx, pk)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		outbox = append(outbox, string(r.Body))
	}
	slices.Sort(outbox)
	return data, outbox
}

func proofRow(rk, v string) store.Entity {
	return store.Entity{RowKey: rk, Properties: map[string]any{"V": v}}
}

// TestProofCrashAtEveryRequest: three transactions (insert two rows with
// an outbox message; replace one, delete the other, with a message;
// upsert a third row) each crash before and after each of their requests
// (the fence read, the transaction, the reads that settle a lost answer),
// on memstore and on Azurite, through a wrapper that keeps the typed
// lane. The partition must then be as before the transaction or as
// after, whole; the restarted process reads it and commits again only
// when it is as before. The rows and the outbox then hold what the
// transactions say: lost 0, duplicated 0 (an outbox message twice),
// half-written 0.
func TestProofCrashAtEveryRequest(t *testing.T) {
	type step struct {
		name string
		fn   func(tx *partition.Txn) error
		data map[string]string
		msgs []string
	}
	steps := []step{
		{"insert two rows and a message", func(tx *partition.Txn) error {
			if err := tx.Insert("a", proofRow("a", "1")); err != nil {
				return err
			}
			if err := tx.Insert("b", proofRow("b", "1")); err != nil {
				return err
			}
			_, err := tx.Outbox(partition.Message{Topic: "t", Body: []byte("m1")})
			return err
		}, map[string]string{"a": "1", "b": "1"}, []string{"m1"}},
		{"replace one, delete the other, and a message", func(tx *partition.Txn) error {
			if err := tx.Update("a", proofRow("a", "2"), store.Replace, store.ETagAny); err != nil {
				return err
			}
			if err := tx.Delete("b", "b", store.ETagAny); err != nil {
				return err
			}
			_, err := tx.Outbox(partition.Message{Topic: "t", Body: []byte("m2")})
			return err
		}, map[string]string{"a": "2"}, []string{"m1", "m2"}},
		{"upsert a third row", func(tx *partition.Txn) error {
			return tx.Upsert("c", proofRow("c", "3"), store.Replace)
		}, map[string]string{"a": "2", "c": "3"}, []string{"m1", "m2"}},
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "proof")
		commit := func(tbl store.Table, pk string, fn func(tx *partition.Txn) error) error {
			p, err := partition.New(tbl, pk, nil)
			if err != nil {
				return err
			}
			tx, err := p.Begin(ctx)
			if err != nil {
				return err
			}
			if err := fn(tx); err != nil {
				return err
			}
			_, err = tx.Commit(ctx)
			return err
		}
		var crashes, operations, lost, duplicated, half int
		where := map[string]int{}
		for k, s := range steps {
			var beforeData map[string]string
			var beforeMsgs []string
			if k > 0 {
				beforeData, beforeMsgs = steps[k-1].data, steps[k-1].msgs
			} else {
				beforeData = map[string]string{}
			}
			for n := int64(1); ; n++ {
				done := false
				for _, after := range []bool{false, true} {
					pk := fmt.Sprintf("p%d-%d-%v", k, n, after)
					for _, prev := range steps[:k] {
						if err := commit(b.Store.Table(name), pk, prev.fn); err != nil {
							t.Fatal(err)
						}
					}
					cs := &eventualtest.CrashStore{Store: b.Store}
					cs.Arm(n, after)
					var err error
					crashed := eventualtest.Survive(func() { err = commit(cs.Table(name), pk, s.fn) })
					operations++
					if !crashed {
						cs.Arm(0, false)
						done = true
						if err != nil {
							t.Fatalf("%s without a crash: %v", s.name, err)
						}
					} else {
						crashes++
						cs.AddPoints(where)
						data, msgs := proofRows(t, b.Store.Table(name), pk)
						switch {
						case maps.Equal(data, beforeData) && slices.Equal(msgs, beforeMsgs):
							if err := commit(b.Store.Table(name), pk, s.fn); err != nil {
								t.Fatalf("%s: recovery: %v", s.name, err)
							}
						case maps.Equal(data, s.data) && slices.Equal(msgs, s.msgs):
						default:
							half++
							t.Errorf("%s, crash at request %d (after %v): rows %v, outbox %v", s.name, n, after, data, msgs)
						}
					}
					data, msgs := proofRows(t, b.Store.Table(name), pk)
					if !maps.Equal(data, s.data) || !slices.Equal(msgs, s.msgs) {
						if len(msgs) > len(s.msgs) {
							duplicated++
						} else {
							lost++
						}
						t.Errorf("%s, crash at request %d (after %v): rows %v, outbox %v; want %v, %v", s.name, n, after, data, msgs, s.data, s.msgs)
					}
				}
				if done {
					break
				}
			}
		}
		t.Logf("%s: %d transactions, crash points %d, operations %d: lost %d, duplicated %d, half-written %d; points %v",
			b.Name, len(steps), crashes, operations, lost, duplicated, half, where)
		if crashes == 0 {
			t.Fatal("no crash was injected")
		}
	})
}

// TestProofSeededFaults: writers of one partition each commit
// transactions that count their own row up and add an outbox message,
// through storetest.WrapStore (the typed lane kept, unlike the older
// tests' hookTable), while about one request in five meets a seeded
// fault: on memstore and on Azurite through the kit, and on Azurite
// through the fault proxy. A commit that succeeded must be in the
// partition at once; a conflict or a failure must have written nothing
// (the writer begins again); an unknown outcome is settled by reading the
// writer's row. At the end each row holds its writer's acknowledged
// count, and the outbox holds each committed message once: lost 0,
// duplicated 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, label string, direct, faulty store.Store, f *prooftest.Faults, name string) {
		ctx := context.Background()
		const writers = 4
		each := 15
		if testing.Short() {
			each = 6
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		count := func(w int) int {
			e, err := direct.Table(name).Get(ctx, "p", fmt.Sprintf("w%d", w), nil)
			if store.EntityNotFound(err) {
				return 0
			}
			if err != nil {
				t.Error(err)
				return -1
			}
			var n int
			fmt.Sscan(e.Properties["V"].(string), &n)
			return n
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				p, err := partition.New(faulty.Table(name), "p", nil)
				if err != nil {
					t.Error(err)
					return
				}
				for i := 1; i <= each; i++ {
					for try := 0; ; try++ {
						var err error
						tx, err := p.Begin(ctx)
						if err == nil {
							if err = tx.Upsert("row", proofRow(fmt.Sprintf("w%d", w), fmt.Sprint(i)), store.Replace); err != nil {
								t.Error(err)
								return
							}
							if _, err = tx.Outbox(partition.Message{Topic: "t", Body: fmt.Appendf(nil, "w%d-%02d", w, i)}); err != nil {
								t.Error(err)
								return
							}
							_, err = tx.Commit(ctx)
						}
						kind := "done"
						switch {
						case err == nil:
						case errors.Is(err, partition.ErrConflict):
							kind = "conflict"
						case errors.Is(err, store.ErrUnknownOutcome):
							kind = "unknown"
						default:
							kind = "failed"
						}
						note(kind)
						got := count(w)
						if kind == "done" && got != i || (kind == "conflict" || kind == "failed") && got != i-1 {
							t.Errorf("%s: writer %d commit %d %s (%v), row holds %d", label, w, i, kind, err, got)
							return
						}
						if got == i {
							break
						}
						if try > 200 {
							t.Errorf("%s: writer %d commit %d never applied", label, w, i)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		data, msgs := proofRows(t, direct.Table(name), "p")
		lost, duplicated := 0, 0
		seen := map[string]int{}
		for _, m := range msgs {
			seen[m]++
		}
		for w := range writers {
			if data[fmt.Sprintf("w%d", w)] != fmt.Sprint(each) {
				lost++
			}
			for i := 1; i <= each; i++ {
				switch n := seen[fmt.Sprintf("w%d-%02d", w, i)]; {
				case n == 0:
					lost++
				case n > 1:
					duplicated += n - 1
				}
			}
		}
		if len(seen) > writers*each {
			duplicated += len(seen) - writers*each
		}
		t.Logf("%s: %d writers x %d commits in one partition, faults %d %v; outcomes %v; %d outbox rows: lost %d, duplicated %d",
			label, writers, each, f.Total(), f.Counts(), outcomes, len(msgs), lost, duplicated)
		if lost+duplicated != 0 {
			t.Fatalf("rows %v", data)
		}
		if f.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	prooftest.Each(t, nil, nil, func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		run(t, label, b.Store, faulty, f, b.NewTable(t, "pf"))
	})
}
