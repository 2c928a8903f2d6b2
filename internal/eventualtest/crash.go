package eventualtest

import (
	"context"
	"maps"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// Crash is what a CrashStore panics with: the process dies at that call.
type Crash struct{}

// CrashStore wraps a store and makes the process "crash" (panic with
// Crash{}) at the At-th request, counted over the table, queue and
// container requests Points names; At 0 never crashes. Its tables keep
// the typed lane of the store's (they are wrapped with
// storetest.WrapTable), so the code under test takes the lane it takes
// in production. With After false the request is not
// made; with After true it is made (and reaches the store) and the crash
// comes before its answer is seen. Arm sets both for the next crash.
//
// A request the engine makes on a goroutine of its own after the call
// that caused it returned (eventual.Detached: a write's messages) has no
// caller to unwind to, and a panic there would end the test binary: its
// crash ends that goroutine instead (runtime.Goexit, its deferred calls
// run), which is what the process dying does to the request: a message
// not sent (crash before) or sent with no one left to see the answer
// (after). The crash point is recorded as any other, and CrashStore's
// Survive reports it as a crash of the call it came under.
type CrashStore struct {
	store.Store
	calls    atomic.Int64
	at       atomic.Int64
	after    atomic.Bool
	hits     atomic.Int64
	detached atomic.Int64 // crashes of detached requests

	mu      sync.Mutex
	points  map[string]int // "before Transact", "after DeleteMessage", ...
	dpoints map[string]int // those of detached requests
}

// Arm schedules a crash at the n-th request from now (n >= 1), before or
// after it reaches the store; Arm(0, _) disarms.
func (c *CrashStore) Arm(n int64, after bool) {
	c.after.Store(after)
	if n <= 0 {
		c.at.Store(0)
		return
	}
	c.at.Store(c.calls.Load() + n)
}

// ArmAt schedules a crash at the n-th request counted from the store's
// first, before the request when n is even and after it when n is odd,
// so that a seeded random n lands crashes on both sides of every kind of
// request; a request already made never crashes. It is Arm for a test
// that draws one number per crash.
func (c *CrashStore) ArmAt(n int64) {
	c.after.Store(n%2 == 1)
	if n <= c.calls.Load() {
		c.at.Store(0)
		return
	}
	c.at.Store(n)
}

// Armed reports whether a crash is still to come.
func (c *CrashStore) Armed() bool { return c.at.Load() != 0 }

// Crashes counts the crashes so far.
func (c *CrashStore) Crashes() int64 { return c.hits.Load() }

// Points returns how many crashes came at each point: "before" or
// "after" and the request ("Table.Transact", "Queue.Put",
// "Queue.DeleteMessage", ...).
func (c *CrashStore) Points() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.points))
	for k, v := range c.points {
		out[k] = v
	}
	return out
}

// Calls counts the requests so far.
func (c *CrashStore) Calls() int64 { return c.calls.Load() }

// DetachedCrashes counts the crashes of detached requests so far (they
// are among Crashes).
func (c *CrashStore) DetachedCrashes() int64 { return c.detached.Load() }

// DetachedPoints returns how many crashes of detached requests came at
// each point (they are among Points).
func (c *CrashStore) DetachedPoints() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.dpoints)
}

// do runs one request through the crash schedule: f makes it. detached
// is a request no caller waits for (eventual.Detached).
func (c *CrashStore) do(name string, detached bool, f func()) {
	n := c.calls.Add(1)
	if at := c.at.Load(); at == 0 || n != at || !c.at.CompareAndSwap(at, 0) {
		f()
		return
	}
	point := "before " + name
	if c.after.Load() {
		f()
		point = "after " + name
	}
	c.mu.Lock()
	if c.points == nil {
		c.points = map[string]int{}
	}
	c.points[point]++
	if detached {
		if c.dpoints == nil {
			c.dpoints = map[string]int{}
		}
		c.dpoints[point]++
	}
	c.mu.Unlock()
	if detached {
		c.detached.Add(1)
		c.hits.Add(1)
		runtime.Goexit()
	}
	c.hits.Add(1)
	panic(Crash{})
}

// hook is the storetest hook of the store's tables, queues and
// containers: it counts the requests that can crash and crashes the armed
// one.
func (c *CrashStore) hook(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
	name, ok := crashName(call)
	if !ok {
		return do(ctx)
	}
	var err error
	c.do(name, eventual.Detached(ctx), func() { err = do(ctx) })
	return err
}

// crashName names a request that counts as a crash point, by what it
// does rather than by the lane it took: a typed Write of an update is
// "Table.Update", a GetInto "Table.Get", a QueryInto "Table.Query", so
// that a crash point means the same whichever lane the code under test
// uses. Blob requests are "Blob.Put", "Blob.Get" and "Blob.DeleteBlob".
// A queue's heartbeat (an Update without a body) runs on a goroutine of
// its own and never crashes: a crash there equals one at the worker's
// next call.
func crashName(call storetest.Call) (string, bool) {
	switch op := call.EntityOp(); op {
	case "Table.Get", "Table.Insert", "Table.Update", "Table.Upsert", "Table.Delete", "Table.Query", "Table.Transact",
		"Queue.Put", "Queue.Get", "Queue.DeleteMessage":
		return op, true
	case "Queue.Update":
		return op, call.Body != nil
	case "Container.Put", "Container.Get", "Container.DeleteBlob":
		return "Blob." + strings.TrimPrefix(op, "Container."), true
	}
	return "", false
}

// Table wraps the table; it keeps the typed lane of the store's tables.
func (c *CrashStore) Table(name string) store.Table {
	return storetest.WrapTable(c.Store.Table(name), c.hook)
}

// Queue wraps the queue.
func (c *CrashStore) Queue(name string) store.Queue {
	return storetest.WrapQueue(c.Store.Queue(name), c.hook)
}

// Container wraps the container.
func (c *CrashStore) Container(name string) store.Container {
	return storetest.WrapContainer(c.Store.Container(name), c.hook)
}

// Survive runs f, turning a crash into crashed = true; any other panic
// goes on. A crash of a detached request is not seen by f's goroutine:
// CrashStore's Survive reports it too.
func Survive(f func()) (crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(Crash); ok {
				crashed = true
				return
			}
			panic(r)
		}
	}()
	f()
	return false
}

// Survive is the package's Survive for a process whose requests go
// through c. crashed: f's goroutine crashed, so f's caller never saw how
// it ended. detached: a detached request crashed while f ran (a write's
// message, on the engine's goroutine): f went on and its answers stand,
// but the process died there and restarts as after any crash. f should
// wait for the detached requests it causes (Engine.Flush after a write),
// so that they crash under it and the order of the requests, which the
// crash schedule counts, does not depend on the goroutines' timing.
func (c *CrashStore) Survive(f func()) (crashed, detached bool) {
	before := c.detached.Load()
	crashed = Survive(f)
	return crashed, c.detached.Load() != before
}

// KeyPoints are the crash points a crash test must reach: after the
// source transaction (before its message is queued), before the
// queueing, after a guarded write of a step, before and after the
// message delete.
var KeyPoints = []string{"after Table.Transact", "before Queue.Put", "after Table.Update", "after Table.Delete",
	"before Queue.DeleteMessage", "after Queue.DeleteMessage"}

// DetachedKeyPoints are the crash points a crash test of writes through
// the engine must reach on the engine's own goroutine, where a write's
// message is queued after Write returned: before the message is queued
// (it never is: the sweeper must queue it again from the outbox row) and
// after (it is, and the process is gone).
var DetachedKeyPoints = []string{"before Queue.Put", "after Queue.Put"}

// AddPoints adds c's crash points to into.
func (c *CrashStore) AddPoints(into map[string]int) {
	for k, v := range c.Points() {
		into[k] += v
	}
}

// AddDetachedPoints adds c's crash points of detached requests to into.
func (c *CrashStore) AddDetachedPoints(into map[string]int) {
	for k, v := range c.DetachedPoints() {
		into[k] += v
	}
}

// CheckKeyPoints fails t, naming each, for the KeyPoints points misses
// and the DetachedKeyPoints detached misses: a crash schedule that never
// reached one proves nothing about it.
func CheckKeyPoints(t testing.TB, points, detached map[string]int) {
	t.Helper()
	for _, p := range KeyPoints {
		if points[p] == 0 {
			t.Errorf("no crash came %s", p)
		}
	}
	for _, p := range DetachedKeyPoints {
		if detached[p] == 0 {
			t.Errorf("no crash came %s on the engine's goroutine (a write's message)", p)
		}
	}
}
