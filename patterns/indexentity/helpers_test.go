package indexentity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/storetest"
)

// Employee is the guide's example entity: employees of a department, by
// id, listed by last name.
type Employee struct {
	Dept  string     `table:",pk"`
	ID    string     `table:",rk"`
	First string     `table:",omitempty"`
	Last  string     `table:",omitempty"`
	ETag  store.ETag `table:",etag"`
}

func (Employee) TableKind() mapper.Kind { return mapper.Kind{Prefix: "emp_"} }

func lastName(e *Employee) string { return e.Last }

// placements are the three options, in the guide's order.
var placements = []Placement{InBlobs, SamePartition, SeparatePartition}

// nameSeq numbers the queues and containers of the fixtures.
var nameSeq atomic.Int64

var seeds atomic.Uint64

// seeded is a concurrency-safe seeded random source.
func seeded(seed uint64) func() uint64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x1e))
	return func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Uint64()
	}
}

// fixture is a Table of Employee with one placement on fresh tables, its
// engine, and the names a check needs.
type fixture struct {
	e         eventualtest.Env
	st        store.Store // what the Table writes through (maybe wrapped)
	place     Placement
	table     string
	index     string // SeparatePartition
	container string // InBlobs
	eo        eventualtest.Options
	eng       *eventual.Engine
	x         *Table[Employee]
	opts      Options
	tolerate  bool // drain goes on through failed requests (injected faults)
}

// newFixture makes the tables, queues and container of a placement, and
// the Table over st (e.B.Store when nil).
func newFixture(t *testing.T, e eventualtest.Env, p Placement, opts Options, st store.Store) *fixture {
	t.Helper()
	if st == nil {
		st = e.B.Store
	}
	f := &fixture{e: e, st: st, place: p, table: e.B.NewTable(t, "emp"), opts: opts}
	f.opts.Placement = p
	if f.opts.Random == nil {
		f.opts.Random = seeded(seeds.Add(1))
	}
	if f.opts.Backoff == 0 {
		f.opts.Backoff, f.opts.MaxBackoff = time.Millisecond, 20*time.Millisecond
	}
	if p != SamePartition {
		n := fmt.Sprint(nameSeq.Add(1))
		f.eo = eventualtest.Options{Queue: "ie" + e.Names + "x" + n, Options: eventual.Options{Concurrency: 4, PollInterval: 10 * time.Millisecond, Backoff: time.Millisecond, Visibility: 2 * time.Second}}
		if e.Fake() {
			f.eo.Now = e.Clock.Now
			f.eo.Visibility = 30 * time.Second
			f.eo.Sleep = func(context.Context, time.Duration) error { return nil }
		}
		f.eng = eventualtest.NewEngine(t, st, f.eo)
		f.opts.Engine = f.eng
	}
	switch p {
	case SeparatePartition:
		f.index = e.B.NewTable(t, "lists")
		f.opts.IndexTable = f.index
	case InBlobs:
		f.container = "lists" + e.Names + "x" + fmt.Sprint(nameSeq.Add(1))
		if err := e.B.Store.Container(f.container).Create(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.B.Store.Container(f.container).Delete(context.Background()) })
		f.opts.Container = f.container
	}
	f.x = f.open(t, st)
	return f
}

// open builds a fresh Table (and engine) over st, as a restarted process
// does.
func (f *fixture) open(t *testing.T, st store.Store) *Table[Employee] {
	t.Helper()
	o := f.opts
	if f.place != SamePartition {
		eng, err := f.eo.New(st)
		if err != nil {
			t.Fatal(err)
		}
		f.eng, o.Engine = eng, eng
	}
	x, err := New(st, f.table, &o, List("lastname", lastName))
	if err != nil {
		t.Fatal(err)
	}
	f.x = x
	return x
}

// scope is the PartitionKey a lookup of dept passes.
func (f *fixture) scope(dept string) string {
	if f.place == SamePartition {
		return dept
	}
	return ""
}

// drain runs the engine until its queue is empty and the entity table's
// outbox is empty, sweeping in between: the lists then hold every write.
// It reads the queue and the outbox straight from the backend.
func (f *fixture) drain(t *testing.T) {
	t.Helper()
	switch {
	case f.place == SamePartition:
	case f.tolerate:
		eventualtest.DrainTolerant(t, f.e, &f.eng, f.eo, f.e.B.Store, f.table)
	default:
		eventualtest.Drain(t, f.e, &f.eng, f.eo, f.e.B.Store, f.table)
	}
}

// counts are what a full check found.
type counts struct {
	entities, listed, lists   int
	lost, duplicated, stale   int
	segments, maxSegmentBytes int
}

func (c counts) String() string {
	return fmt.Sprintf("entities %d, listed %d in %d lists (%d index entities or blobs): lost %d, duplicated %d, stale %d",
		c.entities, c.listed, c.lists, c.segments, c.lost, c.duplicated, c.stale)
}

// listID names one list in a check: its value and, for SamePartition,
// its partition.
type listID struct{ pk, value string }

// check compares every list with a full scan of the entities: each
// listed entity is in the list of its value exactly once (lost,
// duplicated), and no list names an entity that is gone or holds another
// value (stale). It reads the stored rows and blobs itself.
func (f *fixture) check(t *testing.T) counts {
	t.Helper()
	ctx := context.Background()
	st := f.e.B.Store
	var c counts
	want := map[listID]map[Key]bool{}
	holds := map[Key]string{}
	for v, err := range mapper.NewRepository[Employee](st, f.table).Query(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		c.entities++
		k := Key{PartitionKey: v.Dept, RowKey: v.ID}
		holds[k] = v.Last
		if v.Last == "" {
			continue
		}
		id := listID{value: v.Last}
		if f.place == SamePartition {
			id.pk = v.Dept
		}
		if want[id] == nil {
			want[id] = map[Key]bool{}
		}
		want[id][k] = true
	}
	got := map[listID][]entry{}
	switch f.place {
	case SamePartition, SeparatePartition:
		tbl := st.Table(f.table)
		prefix, _ := keys.PrefixOf("lastname")
		cond := filter.RK.InRange(prefix)
		if f.place == SeparatePartition {
			tbl = st.Table(f.index)
			cond = filter.PK.InRange(prefix)
		}
		for e, err := range store.All(ctx, tbl, store.Query{Filter: cond.String()}) {
			if err != nil {
				t.Fatal(err)
			}
			key := e.RowKey
			if f.place == SeparatePartition {
				key = e.PartitionKey
			}
			parts, err := keys.Split(key)
			if err != nil || len(parts) < 2 {
				t.Fatalf("index entity (%q, %q): %v", e.PartitionKey, e.RowKey, err)
			}
			entries, err := decodeEntity(e, f.place == SeparatePartition)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.ValidateEntity(&e); err != nil {
				t.Fatalf("index entity over the service's limits: %v", err)
			}
			c.segments++
			c.maxSegmentBytes = max(c.maxSegmentBytes, store.EntitySize(&e))
			id := listID{value: parts[1]}
			if f.place == SamePartition {
				id.pk = e.PartitionKey
			}
			got[id] = append(got[id], entries...)
		}
	case InBlobs:
		cont := st.Container(f.container)
		marker := ""
		for {
			page, err := cont.List(ctx, store.BlobListOptions{Prefix: "lastname/", Marker: marker})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range page.Blobs {
				data, _, err := cont.Get(ctx, b.Name)
				if err != nil {
					t.Fatal(err)
				}
				entries, err := decodeText(data)
				if err != nil {
					t.Fatal(err)
				}
				v, err := keys.Unescape(strings.TrimPrefix(b.Name, "lastname/"))
				if err != nil {
					t.Fatal(err)
				}
				c.segments++
				c.maxSegmentBytes = max(c.maxSegmentBytes, len(data))
				got[listID{value: v}] = append(got[listID{value: v}], entries...)
			}
			if page.NextMarker == "" {
				break
			}
			marker = page.NextMarker
		}
	}
	seen := map[Key]int{}
	for id, entries := range got {
		if len(entries) > 0 {
			c.lists++
		}
		for _, en := range entries {
			c.listed++
			seen[en.Key]++
			if seen[en.Key] == 2 {
				c.duplicated++
				t.Errorf("%v is listed twice (now in %q)", en.Key, id.value)
			}
			if v, ok := holds[en.Key]; !ok || v != id.value || !want[id][en.Key] {
				c.stale++
				t.Errorf("list %q (partition %q) names %v, which holds %q (exists %v)", id.value, id.pk, en.Key, v, ok)
			}
		}
	}
	for id, ks := range want {
		for k := range ks {
			if !slices.ContainsFunc(got[id], func(e entry) bool { return e.Key == k }) {
				c.lost++
				t.Errorf("%v holds %q but its list does not name it", k, id.value)
			}
		}
	}
	return c
}

// idOf is the RowKey of employee n.
func idOf(n int) string { return fmt.Sprintf("emp_%06d", n) }

// must fails the test on a non-nil error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// collect drains a lookup.
func collect(t *testing.T, seq func(func(Employee, error) bool)) []Employee {
	t.Helper()
	var out []Employee
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func idsOf(vs []Employee) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Dept + "/" + v.ID
	}
	return out
}

// raceStore wraps a store: every write first waits a random moment (so
// that goroutines on memstore interleave as they do over a network), and
// the writes the service refuses because a row or blob changed since it
// was read (412, or 409 for an insert) are counted: the races the test
// provoked.
type raceStore struct {
	store.Store
	races  atomic.Int64
	random func() uint64
}

func newRaceStore(st store.Store) *raceStore {
	return &raceStore{Store: st, random: seeded(seeds.Add(1))}
}

func (s *raceStore) wait() {
	time.Sleep(time.Duration(s.random()%200) * time.Microsecond)
}

func (s *raceStore) note(err error) {
	if errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) {
		s.races.Add(1)
	}
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (s *raceStore) Table(name string) store.Table {
	return storetest.WrapTable(s.Store.Table(name), s.hook)
}

// Container wraps the container.
func (s *raceStore) Container(name string) store.Container {
	return storetest.WrapContainer(s.Store.Container(name), s.hook)
}

// hook delays and notes the table's inserts, updates, deletes and
// transactions (in either lane) and the container's puts and deletes.
func (s *raceStore) hook(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
	switch c.EntityOp() {
	case "Table.Insert", "Table.Update", "Table.Delete", "Table.Transact", "Container.Put", "Container.DeleteBlob":
		s.wait()
		err := do(ctx)
		s.note(err)
		return err
	}
	return do(ctx)
}
