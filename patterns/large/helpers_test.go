package large

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// Doc is the test type: two large fields of each stored type and a json
// one beside ordinary properties.
type Doc struct {
	Folder string     `table:",pk"`
	ID     string     `table:",rk"`
	ETag   store.ETag `table:",etag"`
	Title  string
	Pages  int32
	Body   string            `table:",large"`
	Scan   []byte            `table:",large"`
	Notes  map[string]string `table:",json,large,omitempty"`
}

// seededReader is a deterministic random source for blob names.
type seededReader struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (s *seededReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Read(p)
}

var seeds atomic.Uint64

// seeded returns a fresh seeded source; no two stores share a seed.
func seeded() *seededReader {
	var seed [32]byte
	n := seeds.Add(1)
	for i := range 8 {
		seed[i] = byte(n >> (8 * i))
	}
	return &seededReader{r: rand.NewChaCha8(seed)}
}

var names atomic.Int64

// runID keeps names unique across runs against one long-lived Azurite.
var runID = time.Now().UnixNano() % 1_000_000

// env is one test's table and container on one backend.
type env struct {
	b         backendtest.Backend
	st        store.Store
	table     string
	container string
}

// newEnv makes a fresh table and container on b (deleted when the test
// ends); st, when not nil, wraps b.Store (a fault injector).
func newEnv(t *testing.T, b backendtest.Backend) *env {
	t.Helper()
	e := &env{b: b, st: b.Store, table: b.NewTable(t, "large"),
		container: fmt.Sprintf("large-%d-%d", runID, names.Add(1))}
	if err := b.Store.Container(e.container).Create(t.Context()); err != nil {
		t.Fatalf("create container %s: %v", e.container, err)
	}
	t.Cleanup(func() { _ = b.Store.Container(e.container).Delete(context.Background()) })
	return e
}

// store returns a Store of Doc over the env's table and container, on st
// (the env's store when nil).
func (e *env) store(t *testing.T, st store.Store, o Options) *Store[Doc] {
	t.Helper()
	if st == nil {
		st = e.st
	}
	if o.Random == nil {
		o.Random = seeded()
	}
	if o.Sleep == nil {
		o.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	s, err := New[Doc](st, e.table, e.container, &o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// later returns a Store whose clock reads twice the grace period ahead,
// as a sweeper running long after the writes would.
func (e *env) later(t *testing.T) *Store[Doc] {
	t.Helper()
	return e.store(t, nil, Options{Now: func() time.Time { return time.Now().Add(2 * DefaultGrace) }})
}

// blobs lists the container's blob names.
func (e *env) blobs(t *testing.T) []string {
	t.Helper()
	var out []string
	o := store.BlobListOptions{}
	for {
		p, err := e.b.Store.Container(e.container).List(t.Context(), o)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range p.Blobs {
			out = append(out, b.Name)
		}
		if p.NextMarker == "" {
			return out
		}
		o.Marker = p.NextMarker
	}
}

// raw reads an entity as stored.
func (e *env) raw(t *testing.T, pk, rk string) (store.Entity, bool) {
	t.Helper()
	got, err := e.b.Store.Table(e.table).Get(t.Context(), pk, rk, nil)
	if store.EntityNotFound(err) {
		return got, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return got, true
}

// refs returns the blob names the stored entity references, sorted.
func (e *env) refs(t *testing.T, s *Store[Doc], pk, rk string) []string {
	t.Helper()
	ent, ok := e.raw(t, pk, rk)
	if !ok {
		return nil
	}
	var out []string
	for _, r := range s.refsOf(&ent) {
		out = append(out, r.Blob)
	}
	slices.Sort(out)
	return out
}

// text makes a deterministic string of n bytes (ASCII, so n UTF-16
// units) that compresses well but not trivially: a 64 KiB block of random
// words, repeated.
func text(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 7))
	words := []string{"alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta "}
	block := make([]byte, 0, 64*1024+8)
	for len(block) < 64*1024 {
		block = append(block, words[r.IntN(len(words))]...)
	}
	b := make([]byte, 0, n+len(block))
	for len(b) < n {
		b = append(b, block...)
	}
	return string(b[:n])
}

// noise makes n incompressible bytes.
func noise(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), 1})
	_, _ = r.Read(b)
	return b
}

// counting wraps a store and counts requests by operation.
type counting struct {
	store.Store
	mu sync.Mutex
	n  map[string]int
}

func newCounting(st store.Store) *counting { return &counting{Store: st, n: map[string]int{}} }

func (c *counting) count(op string) {
	c.mu.Lock()
	c.n[op]++
	c.mu.Unlock()
}

func (c *counting) get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[op]
}

func (c *counting) reset() {
	c.mu.Lock()
	c.n = map[string]int{}
	c.mu.Unlock()
}

// Table wraps the table with storetest's kit, which keeps its typed lane.
func (c *counting) Table(name string) store.Table {
	return storetest.WrapTable(c.Store.Table(name), c.hook)
}

// Container wraps the container.
func (c *counting) Container(name string) store.Container {
	return storetest.WrapContainer(c.Store.Container(name), c.hook)
}

func (c *counting) hook(ctx context.Context, call storetest.Call, do func(context.Context) error) error {
	if op, ok := opName(call); ok {
		c.count(op)
	}
	return do(ctx)
}

// opName names the requests the tests count and fault, in either lane:
// "get", "insert", "update", "delete", "blob put", "blob get" and "blob
// delete".
func opName(c storetest.Call) (string, bool) {
	switch c.EntityOp() {
	case "Table.Get":
		return "get", true
	case "Table.Insert":
		return "insert", true
	case "Table.Update":
		return "update", true
	case "Table.Delete":
		return "delete", true
	case "Container.Put":
		return "blob put", true
	case "Container.Get":
		return "blob get", true
	case "Container.DeleteBlob":
		return "blob delete", true
	}
	return "", false
}
