package large

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// crash is what a faultStore panics with: the process dies at that request.
type crash struct{}

// fault is what happens to one request.
type fault int

const (
	pass        fault = iota
	crashBefore       // the process dies before the request leaves
	crashAfter        // the request is applied, then the process dies
	loseBefore        // the request is lost before the service sees it
	loseAfter         // the request is applied and its answer is lost
)

func (f fault) String() string {
	return [...]string{"pass", "crash before", "crash after", "lost before", "lost after"}[f]
}

// faultStore wraps a store: request number at (counted over every table
// and container call) meets fault kind; after a crash every request
// panics, as nothing runs in a dead process. A lost answer is an unknown
// outcome for a write and a transient failure for a read, as the
// backends report them; unlike memstore's own faults, no read-back has
// settled it, so the package's own resolution is what the test proves.
type faultStore struct {
	store.Store
	mu   sync.Mutex
	n    int
	ops  []string
	at   int
	kind fault
	hit  string // the operation that met the fault
	dead bool
	// between runs after a lost request (applied or not), before its
	// caller sees the lost answer.
	between func()
}

func (f *faultStore) do(op string, write bool, call func() error) error {
	f.mu.Lock()
	if f.dead {
		f.mu.Unlock()
		panic(crash{})
	}
	i := f.n
	f.n++
	f.ops = append(f.ops, op)
	k := pass
	if i == f.at {
		k, f.hit = f.kind, op
	}
	if k == crashBefore {
		f.dead = true
	}
	f.mu.Unlock()
	switch k {
	case crashBefore:
		panic(crash{})
	case crashAfter:
		_ = call()
		f.mu.Lock()
		f.dead = true
		f.mu.Unlock()
		panic(crash{})
	case loseBefore, loseAfter:
		if k == loseAfter {
			_ = call()
		}
		if f.between != nil {
			f.between()
		}
		return lost(write)
	}
	return call()
}

func lost(write bool) error {
	return &store.Error{Code: store.CodeResponseLost, Index: -1, Unknown: write, Source: store.SourceTransport, Message: "injected: the answer was lost"}
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (f *faultStore) Table(name string) store.Table {
	return storetest.WrapTable(f.Store.Table(name), f.hook)
}

// Container wraps the container.
func (f *faultStore) Container(name string) store.Container {
	return storetest.WrapContainer(f.Store.Container(name), f.hook)
}

// hook counts the requests opName names and meets them with the fault.
func (f *faultStore) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	op, ok := opName(c)
	if !ok {
		return do(ctx)
	}
	return f.do(op, c.Write, func() error { return do(ctx) })
}

// survive runs f, turning a crash into crashed = true.
func survive(f func() error) (err error, crashed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); ok {
				crashed = true
				return
			}
			panic(r)
		}
	}()
	return f(), false
}

// crashCase is one logical write: op is the write under test, and old
// and new are the stored values without and with it (nil: no entity).
type crashCase struct {
	name     string
	op       func(ctx context.Context, s *Store[Doc], pk string) error
	old, new func(pk string) *Doc
}

func bigDoc(pk, tag string, body, scan int) *Doc {
	return &Doc{Folder: pk, ID: "d", Title: tag, Body: tag + text(uint64(len(tag)), body), Scan: append([]byte(tag), noise(uint64(body), scan)...)}
}

var crashCases = []crashCase{
	{
		name: "insert, two blobs",
		op: func(ctx context.Context, s *Store[Doc], pk string) error {
			return s.Insert(ctx, bigDoc(pk, "new", 40_000, 70_000))
		},
		old: func(string) *Doc { return nil },
		new: func(pk string) *Doc { return bigDoc(pk, "new", 40_000, 70_000) },
	},
	{
		name: "update, one old blob, two new",
		old:  func(pk string) *Doc { return bigDoc(pk, "old", 40_000, 10) },
		op: func(ctx context.Context, s *Store[Doc], pk string) error {
			cur, err := s.GetFields(ctx, pk, "d")
			if err != nil {
				return err
			}
			d := bigDoc(pk, "new", 50_000, 80_000)
			d.ETag = cur.ETag
			return s.Update(ctx, d)
		},
		new: func(pk string) *Doc { return bigDoc(pk, "new", 50_000, 80_000) },
	},
	{
		name: "put, two old blobs, values now small",
		old:  func(pk string) *Doc { return bigDoc(pk, "old", 40_000, 70_000) },
		op: func(ctx context.Context, s *Store[Doc], pk string) error {
			return s.Put(ctx, bigDoc(pk, "new", 100, 100))
		},
		new: func(pk string) *Doc { return bigDoc(pk, "new", 100, 100) },
	},
	{
		name: "put without blobs over a missing entity",
		old:  func(string) *Doc { return nil },
		op: func(ctx context.Context, s *Store[Doc], pk string) error {
			return s.Put(ctx, bigDoc(pk, "new", 100, 100))
		},
		new: func(pk string) *Doc { return bigDoc(pk, "new", 100, 100) },
	},
	{
		name: "delete, two blobs",
		old:  func(pk string) *Doc { return bigDoc(pk, "old", 40_000, 70_000) },
		op:   func(ctx context.Context, s *Store[Doc], pk string) error { return s.DeleteKey(ctx, pk, "d") },
		new:  func(string) *Doc { return nil },
	},
}

// A crash or a lost answer at every request of a write (each blob put,
// the read of the version replaced, the entity write, each old-blob
// delete, and the read-backs that follow) leaves every entity's
// references resolving, the stored value the old or the new one as the
// write reported, and at worst orphan blobs, which Sweep removes once
// they are older than the grace period.
func TestCrashAtEveryStep(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		clean := e.store(t, nil, Options{})
		later := e.later(t)
		ctx := t.Context()
		for _, c := range crashCases {
			t.Run(c.name, func(t *testing.T) {
				// The requests of a clean run.
				probe := &faultStore{Store: b.Store, at: -1}
				pk := fmt.Sprintf("probe-%d", names.Add(1))
				if d := c.old(pk); d != nil {
					if err := clean.Put(ctx, d); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.op(ctx, e.store(t, probe, Options{Parallel: 1}), pk); err != nil {
					t.Fatal(err)
				}
				steps := probe.n
				var runs, faults, operations, done, refused, unknowns, crashed, orphans, swept, dangling, wrong int
				kinds := []fault{crashBefore, crashAfter, loseBefore, loseAfter}
				for at := range steps + 2 { // and the read-backs a fault adds
					for _, kind := range kinds {
						runs++
						pk := fmt.Sprintf("c%d-%s-%d", at, kind, names.Add(1))
						if d := c.old(pk); d != nil {
							if err := clean.Put(ctx, d); err != nil {
								t.Fatal(err)
							}
						}
						fs := &faultStore{Store: b.Store, at: at, kind: kind}
						s := e.store(t, fs, Options{Parallel: 1})
						err, died := survive(func() error { return c.op(ctx, s, pk) })
						if fs.hit != "" {
							faults++
						}
						fs.mu.Lock()
						operations += fs.n
						fs.mu.Unlock()
						got, gerr := clean.Get(ctx, pk, "d")
						var state *Doc
						switch {
						case gerr == nil:
							state = &got
						case errors.Is(gerr, store.ErrNotFound) && !errors.Is(gerr, ErrMissingBlob):
						default:
							dangling++
							t.Errorf("%s at request %d (%s): the entity does not resolve: %v", kind, at, fs.hit, gerr)
							continue
						}
						isOld, isNew := same(state, c.old(pk)), same(state, c.new(pk))
						switch {
						case died:
							crashed++
						case err == nil:
							done++
						case errors.Is(err, store.ErrUnknownOutcome):
							unknowns++
						default:
							refused++
						}
						ok := isOld || isNew
						if !died && err == nil {
							ok = isNew
						} else if !died && !errors.Is(err, store.ErrUnknownOutcome) {
							ok = isOld
						}
						if !ok {
							wrong++
							t.Errorf("%s at request %d (%s): write returned %v (crashed %v), stored value old %v new %v",
								kind, at, fs.hit, err, died, isOld, isNew)
						}
						// Orphans only; the sweeper removes them once old.
						refs := e.refs(t, clean, pk, "d")
						blobs := blobsOf(t, e, pk)
						for _, r := range refs {
							if !slices.Contains(blobs, r) {
								dangling++
								t.Errorf("%s at request %d: reference %s has no blob", kind, at, r)
							}
						}
						young, err := clean.Sweep(ctx, SweepOptions{Partitions: []string{pk}})
						if err != nil || young.Removed != 0 {
							t.Fatalf("a sweep within the grace period removed %d: %v", young.Removed, err)
						}
						rep, err := later.Sweep(ctx, SweepOptions{Partitions: []string{pk}})
						if err != nil {
							t.Fatal(err)
						}
						orphans += len(blobs) - len(refs)
						swept += rep.Removed
						if after := blobsOf(t, e, pk); !slices.Equal(after, refs) {
							t.Errorf("%s at request %d: after the sweep blobs %v, references %v", kind, at, after, refs)
						}
						if _, err := clean.Get(ctx, pk, "d"); err != nil && !errors.Is(err, store.ErrNotFound) {
							t.Errorf("%s at request %d: after the sweep: %v", kind, at, err)
						}
					}
				}
				t.Logf("%s, %s: %d requests in a clean run (%v); %d runs, %d faults, %d operations: %d done, %d refused, %d unknown, %d crashed; orphans %d, swept %d; lost %d (dangling references), wrong value %d",
					b.Name, c.name, steps, probe.ops, runs, faults, operations, done, refused, unknowns, crashed, orphans, swept, dangling, wrong)
				if swept != orphans {
					t.Errorf("swept %d of %d orphans", swept, orphans)
				}
			})
		}
	})
}

// blobsOf lists the blobs of partition pk's entities, sorted.
func blobsOf(t *testing.T, e *env, pk string) []string {
	t.Helper()
	var out []string
	o := store.BlobListOptions{Prefix: tablePrefix(e.table) + "_" + escapeKey(pk) + "/"}
	for {
		p, err := e.b.Store.Container(e.container).List(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Blobs {
			out = append(out, b.Name)
		}
		if o.Marker = p.NextMarker; o.Marker == "" {
			break
		}
	}
	slices.Sort(out)
	return out
}

// same reports whether a stored value is want (both nil: no entity).
func same(got, want *Doc) bool {
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	return got.Title == want.Title && got.Body == want.Body && bytes.Equal(got.Scan, want.Scan)
}

// A lost answer to the entity write, with another writer's commit before
// the read-back: the read-back cannot tell whether the write applied
// (the entity holds the other writer's version either way), so the write
// reports an unknown outcome and removes its fresh blobs, which no entity
// references; the other writer's version resolves, and what is left over
// is orphans only.
func TestLostAnswerWithAnotherWriter(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		clean := e.store(t, nil, Options{})
		other := e.store(t, nil, Options{})
		later := e.later(t)
		ctx := t.Context()
		for _, kind := range []fault{loseBefore, loseAfter} {
			for _, op := range []string{"update", "put", "delete"} {
				pk := fmt.Sprintf("w-%s-%s", op, kind)
				if err := clean.Put(ctx, bigDoc(pk, "old", 40_000, 70_000)); err != nil {
					t.Fatal(err)
				}
				cur, err := clean.GetFields(ctx, pk, "d")
				if err != nil {
					t.Fatal(err)
				}
				fs := &faultStore{Store: b.Store, at: -1, kind: kind}
				theirs := bigDoc(pk, "theirs", 45_000, 75_000)
				fs.between = func() {
					if err := other.Put(ctx, theirs); err != nil {
						t.Error(err)
					}
				}
				s := e.store(t, fs, Options{Parallel: 1})
				mine := bigDoc(pk, "mine", 50_000, 80_000)
				mine.ETag = cur.ETag
				// The entity write is the request after the read and, for a
				// write, the two blob puts.
				fs.at = map[string]int{"update": 3, "put": 3, "delete": 1}[op]
				switch op {
				case "update":
					err = s.Update(ctx, mine)
				case "put":
					err = s.Put(ctx, mine)
				case "delete":
					err = s.DeleteKey(ctx, pk, "d")
				}
				if !errors.Is(err, store.ErrUnknownOutcome) || fs.hit == "" || fs.hit == "get" || fs.hit == "blob put" {
					t.Fatalf("%s, %s at %s: %v, want an unknown outcome", op, kind, fs.hit, err)
				}
				got, err := clean.Get(ctx, pk, "d")
				if err != nil || !same(&got, theirs) {
					t.Fatalf("%s, %s: the other writer's version does not resolve: %v", op, kind, err)
				}
				refs := e.refs(t, clean, pk, "d")
				blobs := blobsOf(t, e, pk)
				rep, err := later.Sweep(ctx, SweepOptions{Partitions: []string{pk}})
				if err != nil {
					t.Fatal(err)
				}
				after := blobsOf(t, e, pk)
				t.Logf("%s, %s, %s at %s: %d blobs, %d referenced, %d orphans swept", b.Name, op, kind, fs.hit, len(blobs), len(refs), rep.Removed)
				if !slices.Equal(after, refs) || rep.Removed != len(blobs)-len(refs) {
					t.Fatalf("after the sweep: blobs %v, references %v", after, refs)
				}
			}
		}
	})
}

// A write whose every try is lost before it reaches the service runs out
// of tries with an error that says so and does not claim the write may
// have applied: each read-back showed it had not.
func TestLostTriesAreNotUnknown(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		clean := e.store(t, nil, Options{})
		if err := clean.Put(t.Context(), bigDoc("p", "old", 40_000, 10)); err != nil {
			t.Fatal(err)
		}
		lossy := &lossyTable{}
		s := e.store(t, nil, Options{Attempts: 3})
		s.table = lossy.wrap(s.table)
		err := s.Put(t.Context(), bigDoc("p", "new", 50_000, 10))
		if !errors.Is(err, ErrContention) || errors.Is(err, store.ErrUnknownOutcome) || !errors.Is(err, store.ErrTransient) || lossy.lost != 3 {
			t.Fatalf("%d lost tries: %v", lossy.lost, err)
		}
		got, err := clean.Get(t.Context(), "p", "d")
		if err != nil || !same(&got, bigDoc("p", "old", 40_000, 10)) {
			t.Fatalf("the old version: %v", err)
		}
		if blobs := blobsOf(t, e, "p"); len(blobs) != 1 {
			t.Fatalf("blobs left: %v", blobs)
		}
	})
}

// lossyTable loses every update before it reaches the service.
type lossyTable struct {
	lost int
}

// wrap returns t losing every update (in either lane).
func (l *lossyTable) wrap(t store.Table) store.Table {
	return storetest.WrapTable(t, func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		if op, _ := opName(c); op == "update" {
			l.lost++
			return lost(true)
		}
		return do(ctx)
	})
}

// With memstore's own faults the backend settles a lost answer by reading
// the rows back before the package sees it (as azstore does): the write
// then succeeds or fails as a refusal, and the invariant holds the same.
func TestMemstoreFaultsSettledByTheBackend(t *testing.T) {
	for _, op := range []memstore.Operation{memstore.OpGet, memstore.OpInsert, memstore.OpUpdate, memstore.OpDelete} {
		for _, after := range []bool{false, true} {
			var armed atomic.Bool
			armed.Store(true)
			b := backendtest.Memstore(memstore.WithFaults(func(o memstore.Operation, _ string) error {
				if o != op || !armed.CompareAndSwap(true, false) {
					return nil
				}
				if after {
					return memstore.AfterApply(memstore.ResponseLost())
				}
				return memstore.ResponseLost()
			}))
			armed.Store(false)
			e := newEnv(t, b)
			s := e.store(t, nil, Options{})
			ctx := t.Context()
			if op != memstore.OpInsert { // an insert needs no entity there
				if err := s.Put(ctx, bigDoc("p", "old", 40_000, 70_000)); err != nil {
					t.Fatal(err)
				}
			}
			// The put meets reads, inserts and updates; the delete reads
			// and deletes.
			putArmed, delArmed := op != memstore.OpDelete, op == memstore.OpGet || op == memstore.OpDelete
			hits := 0
			armed.Store(putArmed)
			errPut := s.Put(ctx, bigDoc("p", "new", 50_000, 10))
			if putArmed && !armed.Load() {
				hits++
			}
			got, err := s.Get(ctx, "p", "d")
			if err != nil {
				t.Fatalf("%s, applied %v: %v", op, after, err)
			}
			isNew := same(&got, bigDoc("p", "new", 50_000, 10))
			if (errPut == nil) != isNew {
				t.Fatalf("%s, applied %v: Put returned %v, the new value stored %v", op, after, errPut, isNew)
			}
			armed.Store(delArmed)
			errDel := s.DeleteKey(ctx, "p", "d")
			if delArmed && !armed.Load() {
				hits++
			}
			armed.Store(false)
			_, gerr := s.Get(ctx, "p", "d")
			if (errDel == nil) != errors.Is(gerr, store.ErrNotFound) {
				t.Fatalf("%s, applied %v: DeleteKey returned %v, then Get %v", op, after, errDel, gerr)
			}
			rep, err := e.later(t).Sweep(ctx, SweepOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if left := blobsOf(t, e, "p"); !slices.Equal(left, e.refs(t, s, "p", "d")) {
				t.Fatalf("%s, applied %v: blobs %v after the sweep", op, after, left)
			}
			if want := map[bool]int{true: 1, false: 0}[putArmed] + map[bool]int{true: 1, false: 0}[delArmed]; hits != want {
				t.Fatalf("%s, applied %v: %d faults met, want %d", op, after, hits, want)
			}
			t.Logf("lost %s answer (applied %v): %d faults, put %v, delete %v, orphans swept %d", op, after, hits, errPut, errDel, rep.Removed)
		}
	}
}
