package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

func write(t *testing.T, f *fakeTable, opts store.BulkOptions, actions []store.Action) (store.BulkResult, error) {
	t.Helper()
	if opts.Sleep == nil {
		opts.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	return store.NewBulkWriter(f, opts).Write(context.Background(), actions)
}

func keysOf(actions []store.Action) string {
	var b strings.Builder
	for i, a := range actions {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Entity.PartitionKey + "/" + a.Entity.RowKey)
	}
	return b.String()
}

func TestBulkGroupsByPartition(t *testing.T) {
	var actions []store.Action
	for i := range 12 {
		actions = append(actions, insert(fmt.Sprintf("p%d", i%3), fmt.Sprintf("r%02d", i), nil))
	}
	f := &fakeTable{}
	res, err := write(t, f, store.BulkOptions{}, actions)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written != 12 || res.Failed != 0 || res.Batches != 3 || len(f.calls) != 3 {
		t.Fatalf("written %d failed %d batches %d calls %d; want 12, 0, 3, 3", res.Written, res.Failed, res.Batches, len(f.calls))
	}
	got := map[string]string{}
	for _, c := range f.calls {
		got[c[0].Entity.PartitionKey] = keysOf(c)
	}
	want := map[string]string{
		"p0": "p0/r00 p0/r03 p0/r06 p0/r09",
		"p1": "p1/r01 p1/r04 p1/r07 p1/r10",
		"p2": "p2/r02 p2/r05 p2/r08 p2/r11",
	}
	for pk, w := range want {
		if got[pk] != w {
			t.Errorf("partition %s sent as %q, want %q", pk, got[pk], w)
		}
	}
	// Each outcome carries the ETag of its own write and its batch number
	// (partitions numbered in order of first appearance).
	for i, o := range res.Outcomes {
		a := actions[i].Entity
		if o.Err != nil || o.Attempts != 1 || o.Batch != i%3 {
			t.Fatalf("outcome %d = %+v; want success, 1 attempt, batch %d", i, o, i%3)
		}
		if !strings.HasPrefix(string(o.ETag), fmt.Sprintf(`W/"%s|%s|`, a.PartitionKey, a.RowKey)) {
			t.Fatalf("outcome %d has ETag %s, not one of %s/%s", i, o.ETag, a.PartitionKey, a.RowKey)
		}
	}
}

func TestBulkSplitsAt100Actions(t *testing.T) {
	var actions []store.Action
	for i := range 250 {
		actions = append(actions, insert("p", fmt.Sprintf("r%03d", i), nil))
	}
	f := &fakeTable{}
	res, err := write(t, f, store.BulkOptions{PartitionOrder: true}, actions)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	var sent []store.Action
	for _, c := range f.calls {
		sizes = append(sizes, len(c))
		sent = append(sent, c...)
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) {
		t.Fatalf("transaction sizes %v, want [100 100 50]", sizes)
	}
	if keysOf(sent) != keysOf(actions) {
		t.Fatal("a partition's writes were not sent in input order")
	}
	if res.Outcomes[99].Batch != 0 || res.Outcomes[100].Batch != 1 || res.Outcomes[249].Batch != 2 {
		t.Fatalf("batch numbers %d %d %d, want 0 1 2", res.Outcomes[99].Batch, res.Outcomes[100].Batch, res.Outcomes[249].Batch)
	}
}

// bigEntity is about 800 KB on the wire (10 binary properties of 60,000
// bytes, base64-encoded), so five of them pass 4 MiB.
func bigEntity(pk, rk string) store.Action {
	props := map[string]any{}
	for i := range 10 {
		props[fmt.Sprintf("Chunk%d", i)] = bytes.Repeat([]byte{byte(i)}, 60_000)
	}
	return insert(pk, rk, props)
}

func wireSize(actions []store.Action) int {
	n := 0
	for i := range actions {
		n += store.ActionWireSize(&actions[i])
	}
	return n
}

func TestBulkSplitsUnder4MiB(t *testing.T) {
	var actions []store.Action
	for i := range 12 {
		actions = append(actions, bigEntity("p", fmt.Sprintf("r%02d", i)))
	}
	actions = append(actions, insert("p", "small", nil))
	f := &fakeTable{}
	if _, err := write(t, f, store.BulkOptions{PartitionOrder: true}, actions); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) < 3 {
		t.Fatalf("%d transactions for ~10 MB of writes; want at least 3", len(f.calls))
	}
	var sent []store.Action
	for k, c := range f.calls {
		size := wireSize(c)
		if size >= store.MaxBatchBytes {
			t.Fatalf("transaction %d is %d bytes, not under %d", k, size, store.MaxBatchBytes)
		}
		// Greedy: the next transaction's first write would not have fit.
		if k+1 < len(f.calls) {
			next := f.calls[k+1][0]
			if size+store.ActionWireSize(&next) < store.MaxBatchBytes {
				t.Fatalf("transaction %d (%d bytes) was cut although %s fits", k, size, next.Entity.RowKey)
			}
		}
		sent = append(sent, c...)
	}
	if keysOf(sent) != keysOf(actions) {
		t.Fatal("writes were reordered across the size split")
	}
}

func TestBulkSplitsOnRepeatedRowKey(t *testing.T) {
	upsert := func(rk string, v int32) store.Action {
		return store.Action{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"V": v}}}
	}
	actions := []store.Action{upsert("a", 1), upsert("b", 1), upsert("a", 2), upsert("c", 1), upsert("b", 2), upsert("a", 3)}
	f := &fakeTable{}
	if _, err := write(t, f, store.BulkOptions{}, actions); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range f.calls {
		got = append(got, keysOf(c))
	}
	want := []string{"p/a p/b", "p/a p/c p/b", "p/a"}
	if !slices.Equal(got, want) {
		t.Fatalf("transactions %q, want %q", got, want)
	}
	// The last write to each entity was applied last.
	last := map[string]int32{}
	for _, c := range f.applied {
		for _, a := range c {
			last[a.Entity.RowKey] = a.Entity.Properties["V"].(int32)
		}
	}
	if last["a"] != 3 || last["b"] != 2 || last["c"] != 1 {
		t.Fatalf("final values %v, want a=3 b=2 c=1", last)
	}
}

func TestBulkBoundedConcurrency(t *testing.T) {
	const limit, partitions = 3, 12
	var actions []store.Action
	for i := range partitions * 150 { // two transactions per partition
		actions = append(actions, insert(fmt.Sprintf("p%02d", i%partitions), fmt.Sprintf("r%04d", i), nil))
	}
	// The first `limit` transactions wait for each other, so a writer that
	// runs fewer partitions at once than allowed is caught (it times out).
	// Once they are all in, they stay in a little longer: a writer that
	// runs more than allowed sends another one meanwhile.
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	f := &fakeTable{enter: func([]store.Action) {
		mu.Lock()
		arrived++
		n := arrived
		mu.Unlock()
		if n == limit {
			time.Sleep(50 * time.Millisecond)
			close(all)
		}
		if n <= limit {
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				t.Errorf("only %d transactions ran at once; want %d", n, limit)
			}
		}
	}}
	res, err := write(t, f, store.BulkOptions{Concurrency: limit, PartitionOrder: true}, actions)
	if err != nil {
		t.Fatal(err)
	}
	if f.maxRun != limit {
		t.Fatalf("at most %d transactions ran at once, want exactly %d", f.maxRun, limit)
	}
	if f.overlap {
		t.Fatal("two transactions of one partition ran at the same time")
	}
	if res.Written != len(actions) || len(f.calls) != 2*partitions {
		t.Fatalf("written %d in %d transactions, want %d in %d", res.Written, len(f.calls), len(actions), 2*partitions)
	}
}

func TestBulkResubmitsWithoutTheFailingWrite(t *testing.T) {
	actions := []store.Action{insert("p", "a", nil), insert("p", "b", nil), insert("p", "c", nil), insert("p", "d", nil), insert("p", "e", nil)}
	exists := map[string]bool{"b": true, "d": true}
	f := &fakeTable{fail: func(_ int, acts []store.Action) error {
		for k, a := range acts {
			if exists[a.Entity.RowKey] {
				return failAt(k, store.CodeEntityAlreadyExists, 409)
			}
		}
		return nil
	}}
	res, err := write(t, f, store.BulkOptions{}, actions)
	var be *store.BulkError
	if !errors.As(err, &be) || be.Failed != 2 || be.Total != 5 || be.FirstIndex != 1 || !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("error %v: want a BulkError of 2 of 5 failed, first write 1, matching ErrAlreadyExists", err)
	}
	var sent []string
	for _, c := range f.calls {
		sent = append(sent, keysOf(c))
	}
	if w := []string{"p/a p/b p/c p/d p/e", "p/a p/c p/d p/e", "p/a p/c p/e"}; !slices.Equal(sent, w) {
		t.Fatalf("sent %q, want %q", sent, w)
	}
	for i, wantAttempts := range []int{3, 1, 3, 2, 3} {
		o := res.Outcomes[i]
		rk := actions[i].Entity.RowKey
		if o.Attempts != wantAttempts || o.Batch != 0 {
			t.Errorf("write %s: %d attempts in batch %d, want %d in batch 0", rk, o.Attempts, o.Batch, wantAttempts)
		}
		if exists[rk] {
			var se *store.Error
			if !errors.As(o.Err, &se) || se.Code != store.CodeEntityAlreadyExists || se.Index != -1 || o.ETag != "" {
				t.Errorf("write %s: outcome %+v, want EntityAlreadyExists with Index -1", rk, o)
			}
		} else if o.Err != nil || o.ETag == "" {
			t.Errorf("write %s: outcome %+v, want applied with an ETag", rk, o)
		}
	}
	if res.Written != 3 || res.Failed != 2 {
		t.Fatalf("written %d failed %d, want 3 and 2", res.Written, res.Failed)
	}
}

func TestBulkNoResubmit(t *testing.T) {
	actions := []store.Action{insert("p", "a", nil), insert("p", "b", nil), insert("p", "c", nil), insert("q", "a", nil)}
	f := &fakeTable{fail: func(_ int, acts []store.Action) error {
		if acts[0].Entity.PartitionKey == "p" {
			return failAt(1, store.CodeEntityAlreadyExists, 409)
		}
		return nil
	}}
	res, _ := write(t, f, store.BulkOptions{NoResubmit: true}, actions)
	if len(f.calls) != 2 {
		t.Fatalf("%d transactions sent, want 2 (no resubmission)", len(f.calls))
	}
	if store.Code(res.Outcomes[1].Err) != store.CodeEntityAlreadyExists {
		t.Fatalf("the failing write's outcome is %v", res.Outcomes[1].Err)
	}
	for _, i := range []int{0, 2} {
		err := res.Outcomes[i].Err
		if !errors.Is(err, store.ErrBatchAborted) || errors.Is(err, store.ErrAlreadyExists) {
			t.Fatalf("write %d: %v; want ErrBatchAborted and not the other write's error", i, err)
		}
		if !strings.Contains(err.Error(), "write 1") {
			t.Fatalf("write %d: %v does not name the write that failed", i, err)
		}
	}
	if res.Outcomes[3].Err != nil || res.Written != 1 || res.Failed != 3 {
		t.Fatalf("other partition %v, written %d failed %d; want applied, 1, 3", res.Outcomes[3].Err, res.Written, res.Failed)
	}
}

func TestBulkWholeTransactionFailure(t *testing.T) {
	actions := []store.Action{insert("p", "a", nil), insert("p", "b", nil), insert("q", "a", nil)}
	f := &fakeTable{fail: func(_ int, acts []store.Action) error {
		if acts[0].Entity.PartitionKey == "p" {
			return store.Errorf(store.CodeTableNotFound, 404, "table gone")
		}
		return nil
	}}
	res, err := write(t, f, store.BulkOptions{}, actions)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("error %v: want it to wrap TableNotFound", err)
	}
	for i := range 2 {
		if store.Code(res.Outcomes[i].Err) != store.CodeTableNotFound || res.Outcomes[i].Attempts != 1 {
			t.Fatalf("write %d: %+v; want TableNotFound after 1 attempt", i, res.Outcomes[i])
		}
	}
	if res.Outcomes[2].Err != nil {
		t.Fatalf("another partition's write failed: %v", res.Outcomes[2].Err)
	}
	if len(f.calls) != 2 {
		t.Fatalf("%d transactions sent: an error without an index must not be resubmitted", len(f.calls))
	}
}

// TestBulkRetriesAreJittered: by default a retry sleeps between half its
// backoff and the backoff, not the same time for every writer.
func TestBulkRetriesAreJittered(t *testing.T) {
	busy := store.Errorf(store.CodeServerBusy, 503, "slow down")
	f := &fakeTable{fail: func(n int, _ []store.Action) error {
		if n < 6 {
			return busy
		}
		return nil
	}}
	var sleeps []time.Duration
	opts := store.BulkOptions{MaxAttempts: 8, Sleep: func(_ context.Context, d time.Duration) error {
		sleeps = append(sleeps, d)
		return nil
	}}
	if _, err := write(t, f, opts, []store.Action{insert("p", "a", nil)}); err != nil {
		t.Fatal(err)
	}
	backoff, distinct := 100*time.Millisecond, map[time.Duration]bool{}
	for i, d := range sleeps {
		if d < backoff/2 || d >= backoff {
			t.Fatalf("retry %d slept %v, want [%v, %v)", i+1, d, backoff/2, backoff)
		}
		distinct[d] = true
		backoff *= 2
	}
	if len(sleeps) != 6 || len(distinct) < 2 {
		t.Fatalf("slept %v: want 6 jittered waits", sleeps)
	}
}

func TestBulkRetriesTransientErrors(t *testing.T) {
	busy := store.Errorf(store.CodeServerBusy, 503, "slow down")
	for _, tc := range []struct {
		name        string
		failures    int // transient failures before success
		opts        store.BulkOptions
		wantSleeps  []time.Duration
		wantApplied bool
	}{
		{"recovers", 2, store.BulkOptions{}, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, true},
		{"gives up", 9, store.BulkOptions{MaxAttempts: 3, Backoff: time.Second}, []time.Duration{time.Second, 2 * time.Second}, false},
		{"caps the backoff", 4, store.BulkOptions{Backoff: time.Second, MaxBackoff: 3 * time.Second},
			[]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}, true},
		{"no retries", 1, store.BulkOptions{MaxAttempts: 1}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeTable{fail: func(n int, _ []store.Action) error {
				if n < tc.failures {
					return busy
				}
				return nil
			}}
			var sleeps []time.Duration
			tc.opts.Jitter = func(d time.Duration) time.Duration { return d }
			tc.opts.Sleep = func(_ context.Context, d time.Duration) error {
				sleeps = append(sleeps, d)
				return nil
			}
			res, err := write(t, f, tc.opts, []store.Action{insert("p", "a", nil), insert("p", "b", nil)})
			if !slices.Equal(sleeps, tc.wantSleeps) {
				t.Fatalf("slept %v, want %v", sleeps, tc.wantSleeps)
			}
			o := res.Outcomes[0]
			if o.Attempts != len(tc.wantSleeps)+1 {
				t.Fatalf("%d attempts, want %d", o.Attempts, len(tc.wantSleeps)+1)
			}
			if tc.wantApplied {
				if err != nil || o.Err != nil {
					t.Fatalf("not applied after retries: %v", err)
				}
				return
			}
			if !errors.Is(err, store.ErrThrottled) || !errors.Is(o.Err, store.ErrThrottled) || !errors.Is(res.Outcomes[1].Err, store.ErrThrottled) {
				t.Fatalf("after giving up: %v / %v; want ServerBusy for both writes", err, o.Err)
			}
		})
	}
}

func TestBulkValidatesBeforeSending(t *testing.T) {
	actions := []store.Action{
		insert("p", "ok1", map[string]any{"Good": int32(1)}),
		insert("p", "bad-name", map[string]any{"has-dash": int32(1)}),
		{Kind: store.ActionUpdateMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "no-etag"}},
		insert("p", "bad/key", nil),
		insert("p", "bad-type", map[string]any{"N": 7}), // int, not int32
		{Kind: store.ActionKind(42), Entity: store.Entity{PartitionKey: "p", RowKey: "bad-kind"}},
		insert("p", "ok2", nil),
	}
	f := &fakeTable{}
	res, err := write(t, f, store.BulkOptions{}, actions)
	var be *store.BulkError
	if !errors.As(err, &be) || be.Failed != 5 || be.FirstIndex != 1 {
		t.Fatalf("error %v, want 5 failures, first at write 1", err)
	}
	if len(f.calls) != 1 || keysOf(f.calls[0]) != "p/ok1 p/ok2" {
		t.Fatalf("sent %d transactions; want one with only the valid writes", len(f.calls))
	}
	wantCodes := map[int]string{
		1: store.CodePropertyNameInvalid,
		2: store.CodeInvalidInput,
		3: store.CodeInvalidInput, // a forbidden key character inside a batch
		4: store.CodeInvalidValueType,
		5: store.CodeInvalidInput,
	}
	for i, code := range wantCodes {
		o := res.Outcomes[i]
		var se *store.Error
		if !errors.As(o.Err, &se) || se.Code != code || se.Index != -1 || o.Batch != -1 || o.Attempts != 0 {
			t.Errorf("write %d: %+v (%v); want %s, Index -1, batch -1, never sent", i, o, o.Err, code)
		}
	}
	if res.Outcomes[0].Err != nil || res.Outcomes[6].Err != nil {
		t.Fatal("valid writes sharing a partition with invalid ones were not applied")
	}
}

func TestBulkProgress(t *testing.T) {
	var actions []store.Action
	for i := range 230 {
		actions = append(actions, insert(fmt.Sprintf("p%d", i%2), fmt.Sprintf("r%03d", i), nil))
	}
	actions = append(actions, insert("p0", "bad#key", nil))
	var reports []store.BulkProgress
	var mu sync.Mutex
	inCall := false
	opts := store.BulkOptions{Progress: func(p store.BulkProgress) {
		mu.Lock()
		if inCall {
			t.Error("Progress calls overlapped")
		}
		inCall = true
		mu.Unlock()
		reports = append(reports, p)
		mu.Lock()
		inCall = false
		mu.Unlock()
	}}
	res, _ := write(t, &fakeTable{}, opts, actions)
	if res.Batches != 4 || len(reports) != 4 {
		t.Fatalf("%d progress reports for %d transactions, want one per transaction (4)", len(reports), res.Batches)
	}
	prev := store.BulkProgress{}
	for _, p := range reports {
		if p.Total != 231 || p.Written < prev.Written || p.Failed != 1 || p.Written+p.Failed > p.Total {
			t.Fatalf("reports %+v: counts must grow, Total stay 231, the refused write count as failed", reports)
		}
		prev = p
	}
	if last := reports[len(reports)-1]; last.Written != 230 || last.Failed != 1 {
		t.Fatalf("last report %+v, want 230 written and 1 failed", last)
	}

	// With nothing to send, one report still carries the final counts.
	reports = nil
	write(t, &fakeTable{}, opts, actions[230:])
	if len(reports) != 1 || reports[0] != (store.BulkProgress{Failed: 1, Total: 1}) {
		t.Fatalf("reports %+v, want one with 1 failed of 1", reports)
	}
}

func TestBulkCancellation(t *testing.T) {
	var actions []store.Action
	for i := range 500 {
		actions = append(actions, insert("p", fmt.Sprintf("r%03d", i), nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fakeTable{fail: func(n int, _ []store.Action) error {
		if n == 1 {
			cancel() // the second transaction is in flight when the user cancels
		}
		return nil
	}}
	var last store.BulkProgress
	// One partition in order: transactions one after another.
	w := store.NewBulkWriter(f, store.BulkOptions{PartitionOrder: true, Progress: func(p store.BulkProgress) { last = p }})
	res, err := w.Write(ctx, actions)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want it to wrap context.Canceled", err)
	}
	if len(f.calls) != 2 {
		t.Fatalf("%d transactions sent, want 2: none after the cancel", len(f.calls))
	}
	for i, o := range res.Outcomes {
		sent := i < 200
		if sent && (o.Err != nil || o.Attempts != 1) {
			t.Fatalf("write %d was sent before the cancel but reports %+v", i, o)
		}
		if !sent && (!errors.Is(o.Err, context.Canceled) || o.Attempts != 0 || o.Batch != i/100) {
			t.Fatalf("unsent write %d reports %+v; want context.Canceled, 0 attempts, batch %d", i, o, i/100)
		}
	}
	if res.Written != 200 || res.Failed != 300 || last != (store.BulkProgress{Written: 200, Failed: 300, Total: 500}) {
		t.Fatalf("written %d failed %d, last progress %+v; want 200, 300 and the same counts reported", res.Written, res.Failed, last)
	}
}

// A retry wait ends when the context does.
func TestBulkCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeTable{fail: func(int, []store.Action) error {
		cancel()
		return store.Errorf(store.CodeServerBusy, 503, "busy")
	}}
	res, err := store.NewBulkWriter(f, store.BulkOptions{Backoff: time.Hour}).Write(ctx, []store.Action{insert("p", "a", nil)})
	if !errors.Is(err, context.Canceled) || !errors.Is(res.Outcomes[0].Err, context.Canceled) {
		t.Fatalf("error %v, outcome %v; want context.Canceled without waiting an hour", err, res.Outcomes[0].Err)
	}
}

func TestBulkBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opts store.BulkOptions
		name string
	}{
		{store.BulkOptions{Concurrency: -1}, "Concurrency"},
		{store.BulkOptions{MaxAttempts: -2}, "MaxAttempts"},
		{store.BulkOptions{Backoff: -time.Second}, "Backoff"},
		{store.BulkOptions{MaxBackoff: -1}, "MaxBackoff"},
	} {
		f := &fakeTable{}
		res, err := store.NewBulkWriter(f, tc.opts).Write(context.Background(), []store.Action{insert("p", "a", nil)})
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%+v: error %v, want InvalidInput naming %s", tc.opts, err, tc.name)
		}
		if len(f.calls) != 0 || res.Outcomes != nil {
			t.Errorf("%+v: wrote despite bad options", tc.opts)
		}
	}
}

func TestBulkEmpty(t *testing.T) {
	res, err := write(t, &fakeTable{}, store.BulkOptions{}, nil)
	if err != nil || res.Written != 0 || res.Failed != 0 || len(res.Outcomes) != 0 || res.Batches != 0 {
		t.Fatalf("empty write = %+v, %v", res, err)
	}
}

// A context canceled after the last transaction does not make the failures
// look like a cancellation.
func TestBulkLateCancelIsNotTheCause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeTable{fail: func(int, []store.Action) error {
		defer cancel()
		return store.Errorf(store.CodeTableNotFound, 404, "gone")
	}}
	_, err := store.NewBulkWriter(f, store.BulkOptions{}).Write(ctx, []store.Action{insert("p", "a", nil)})
	var be *store.BulkError
	if !errors.As(err, &be) || be.Stopped != nil || errors.Is(err, context.Canceled) || !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("error %v: want TableNotFound, not a cancellation", err)
	}
}

// Transactions of one partition whose RowKeys are disjoint run at once (up
// to Concurrency); one that writes an entity an earlier one writes waits
// for it; PartitionOrder runs them one after another.
func TestBulkDisjointTransactionsOfOnePartitionOverlap(t *testing.T) {
	const limit = 4
	var actions []store.Action
	for i := range 4 * store.MaxBatchActions {
		actions = append(actions, insert("p", fmt.Sprintf("r%04d", i), nil))
	}
	// A second write to an entity of the first transaction: a fifth
	// transaction that must wait for the first.
	actions = append(actions, store.Action{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "r0000"}})
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	f := &fakeTable{enter: func([]store.Action) {
		mu.Lock()
		arrived++
		n := arrived
		mu.Unlock()
		if n == limit {
			close(all)
		}
		if n <= limit {
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				t.Errorf("only %d transactions of the partition ran at once; want %d", n, limit)
			}
		}
	}}
	res, err := write(t, f, store.BulkOptions{Concurrency: limit}, actions)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("transactions %d, most at once %d, entity clash %v", len(f.calls), f.maxRun, f.rowClash)
	if f.maxRun != limit || f.rowClash || res.Written != len(actions) || len(f.calls) != 5 {
		t.Fatalf("most at once %d (want %d), two writes of one entity at once %v, written %d of %d in %d transactions (want 5)",
			f.maxRun, limit, f.rowClash, res.Written, len(actions), len(f.calls))
	}
	if last := f.calls[len(f.calls)-1]; last[0].Entity.RowKey != "r0000" || len(last) != 1 {
		t.Fatalf("the second write of r0000 was not sent last: %s", keysOf(last))
	}

	g := &fakeTable{}
	if _, err := write(t, g, store.BulkOptions{Concurrency: limit, PartitionOrder: true}, actions); err != nil {
		t.Fatal(err)
	}
	if g.overlap || g.maxRun != 1 {
		t.Fatalf("PartitionOrder: transactions of the partition overlapped (most at once %d)", g.maxRun)
	}
}
