// Package intercept routes every request of a store, table, queue or
// container through a Hook, keeping every capability of what it wraps: a
// wrapped table is a store.TypedTable exactly when the inner table is one,
// so code that probes the lane with driver.Typed takes the same lane
// through the wrapper as without it, and the typed requests (Write, GetInto,
// QueryInto) reach the hook like the others; a wrapped store is a
// store.ACLStore exactly when the inner store is one.
//
// It is the one seam of tablekit's instrumentation (store/meter counts
// what requests cost, store/tkotel traces and measures them) and of the
// tests' fault and crash wrappers (store/storetest's kit is this package).
// A wrapper built with Observe also hands higher layers an
// store.Observer (store.ObserverOf); a store not wrapped costs nothing.
//
// A hook embedding a table (type faultTable struct{ store.Table }) hides
// the typed lane; the kit exists so that no wrapper needs to.
package intercept

import (
	"context"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Call describes one request to a hook.
type Call struct {
	// Op names the request as "Interface.Method": "Table.Insert",
	// "Table.Write", "Table.GetInto", "Table.QueryInto",
	// "Table.Transact", "Queue.Put", "Container.Put",
	// "Store.CreateTable", ...
	Op string
	// Name is the name of the table, queue or container; for a Store
	// call it is the table named, if any.
	Name string
	// Write is set for a request that changes data: every write of a
	// table, queue or container, Queue.Get (it hides the messages it
	// receives), and the Store's table creations and deletions.
	Write bool
	// PartitionKey and RowKey are the entity's keys for Get, GetInto and
	// the single-entity writes; for Transact, those of its first action.
	PartitionKey, RowKey string
	// Action is a single-entity write (Insert, Update, Upsert, Delete,
	// Write) as the action it stands for: its Kind, Entity, IfMatch and,
	// for Write, Source. Entity materializes its properties.
	Action store.Action
	// Actions are a transaction's actions.
	Actions []store.Action
	// Query is the request of Query and QueryInto.
	Query store.Query
	// Blob is the blob's name for a container request.
	Blob string
	// Body is a queue message's body (Put, Update) or a blob's data (Put,
	// AppendBlock).
	Body []byte
}

// Kind is the kind of a single-entity write, or of a transaction's first
// action; ok is false for any other request.
func (c Call) Kind() (kind store.ActionKind, ok bool) {
	switch c.Op {
	case "Table.Insert", "Table.Update", "Table.Upsert", "Table.Delete", "Table.Write":
		return c.Action.Kind, true
	case "Table.Transact":
		if len(c.Actions) > 0 {
			return c.Actions[0].Kind, true
		}
	}
	return 0, false
}

// EntityOp is the Op of the request of the Entity lane that does what c
// does: a typed Write is "Table.Insert", "Table.Update", "Table.Upsert"
// or "Table.Delete" by its kind, GetInto is "Table.Get" and QueryInto
// "Table.Query"; any other request is its own Op. A hook that counts or
// picks requests by EntityOp treats both lanes alike.
func (c Call) EntityOp() string {
	switch c.Op {
	case "Table.GetInto":
		return "Table.Get"
	case "Table.QueryInto":
		return "Table.Query"
	case "Table.Write":
		switch c.Action.Kind {
		case store.ActionInsert:
			return "Table.Insert"
		case store.ActionUpdateMerge, store.ActionUpdateReplace:
			return "Table.Update"
		case store.ActionUpsertMerge, store.ActionUpsertReplace:
			return "Table.Upsert"
		case store.ActionDelete:
			return "Table.Delete"
		}
	}
	return c.Op
}

// Entity returns the entity a single-entity write writes, with its
// properties taken from the action's Source when it has one (a typed
// Write), so that a hook can look at the properties whichever lane the
// caller took.
func (c Call) Entity() (store.Entity, error) {
	a, err := c.Action.WithProperties()
	return a.Entity, err
}

// Hook decides the fate of one request. do sends the request to the
// wrapped store and returns its error; the hook may
//   - pass: return do(ctx);
//   - fail before: return an error without calling do (the request
//     never reaches the store);
//   - apply then lose: call do, then return an error in place of its
//     answer;
//   - crash: panic before or after calling do;
//   - count, delay, or change the context it passes to do.
//
// When the hook returns nil the caller gets the store's answer; when it
// returns do's own error, the store's answer and error; any other error
// reaches the caller with zero results. It is called concurrently.
type Hook func(ctx context.Context, c Call, do func(ctx context.Context) error) error

// Pass is the hook that lets every request through.
func Pass(ctx context.Context, _ Call, do func(context.Context) error) error { return do(ctx) }

// Chain returns a hook that runs hooks in order, each around the next:
// the first sees the request first and the last calls the store.
func Chain(hooks ...Hook) Hook {
	switch len(hooks) {
	case 0:
		return Pass
	case 1:
		return hooks[0]
	}
	outer, inner := hooks[0], Chain(hooks[1:]...)
	return func(ctx context.Context, c Call, do func(context.Context) error) error {
		return outer(ctx, c, func(ctx context.Context) error { return inner(ctx, c, do) })
	}
}

// On returns a hook that runs h on the requests match accepts and lets
// the others through.
func On(match func(Call) bool, h Hook) Hook {
	return func(ctx context.Context, c Call, do func(context.Context) error) error {
		if match(c) {
			return h(ctx, c, do)
		}
		return do(ctx)
	}
}

// WrapStore returns s with every request of its own, and of the tables,
// queues and containers it hands out, routed through h. Its tables keep
// the typed lane of s's tables (see WrapTable), and the result is a
// store.ACLStore exactly when s is one ("Store.GetAccessPolicy",
// "Store.SetAccessPolicy").
func WrapStore(s store.Store, h Hook) store.Store { return wrapStore(s, h, nil, false) }

// Observe is WrapStore for instrumentation: h observes the requests and
// returns do's error as it is (it never fails, loses or alters a
// request), so the typed reads hand each entity to the caller's reader as
// the backend reads it, with nothing kept to replay. The result, and the
// tables, queues and containers it hands out, also hand o to higher
// layers: store.ObserverOf returns o for each of them. A nil o hands on
// the observer of s, if any, as WrapStore does.
func Observe(s store.Store, h Hook, o store.Observer) store.Store { return wrapStore(s, h, o, true) }

func wrapStore(s store.Store, h Hook, o store.Observer, observing bool) store.Store {
	if acl, ok := s.(store.ACLStore); ok {
		return &hookedACLStore{hookedStore{s: s, h: h, o: o, observing: observing}, acl}
	}
	return &hookedStore{s: s, h: h, o: o, observing: observing}
}

// WrapTable returns t with every request routed through h. The result is
// a store.TypedTable exactly when t is one; its typed requests reach h as
// "Table.Write", "Table.GetInto" and "Table.QueryInto". Name does no I/O
// and is not routed.
func WrapTable(t store.Table, h Hook) store.Table { return wrapTable(t, h, nil, false) }

// ObserveTable is WrapTable for instrumentation (see Observe): h returns
// do's error as it is, and the result hands o to higher layers.
func ObserveTable(t store.Table, h Hook, o store.Observer) store.Table {
	return wrapTable(t, h, o, true)
}

func wrapTable(t store.Table, h Hook, o store.Observer, observing bool) store.Table {
	if tt, ok := driver.Typed(t); ok {
		return &hookedTypedTable{hookedTable{t: t, h: h, o: o, observing: observing}, tt}
	}
	return &hookedTable{t: t, h: h, o: o, observing: observing}
}

// WrapQueue returns q with every request but Name routed through h.
func WrapQueue(q store.Queue, h Hook) store.Queue { return ObserveQueue(q, h, nil) }

// ObserveQueue is WrapQueue whose result hands o to higher layers.
func ObserveQueue(q store.Queue, h Hook, o store.Observer) store.Queue {
	return &hookedQueue{q: q, h: h, o: o}
}

// WrapContainer returns c with every request but Name routed through h.
func WrapContainer(c store.Container, h Hook) store.Container { return ObserveContainer(c, h, nil) }

// ObserveContainer is WrapContainer whose result hands o to higher layers.
func ObserveContainer(c store.Container, h Hook, o store.Observer) store.Container {
	return &hookedContainer{c: c, h: h, o: o}
}

// observer is o, or else the observer of what a wrapper wraps.
func observer(o store.Observer, inner any) store.Observer {
	if o != nil {
		return o
	}
	return store.ObserverOf(inner)
}

// result returns the store's answer when the hook passed it on (err is
// nil or the store's own error) and zero results otherwise.
func result[T any](v T, inner, err error) (T, error) {
	if err != nil && err != inner {
		var zero T
		return zero, err
	}
	return v, err
}

type hookedStore struct {
	s store.Store
	h Hook
	o store.Observer
	// observing: h returns do's error as it is (Observe).
	observing bool
}

func (s *hookedStore) Observer() store.Observer { return observer(s.o, s.s) }

func (s *hookedStore) CreateTable(ctx context.Context, name string) error {
	return s.h(ctx, Call{Op: "Store.CreateTable", Name: name, Write: true}, func(ctx context.Context) error {
		return s.s.CreateTable(ctx, name)
	})
}

func (s *hookedStore) CreateTableIfNotExists(ctx context.Context, name string) (bool, error) {
	var created bool
	var inner error
	err := s.h(ctx, Call{Op: "Store.CreateTableIfNotExists", Name: name, Write: true}, func(ctx context.Context) error {
		created, inner = s.s.CreateTableIfNotExists(ctx, name)
		return inner
	})
	return result(created, inner, err)
}

func (s *hookedStore) DeleteTable(ctx context.Context, name string) error {
	return s.h(ctx, Call{Op: "Store.DeleteTable", Name: name, Write: true}, func(ctx context.Context) error {
		return s.s.DeleteTable(ctx, name)
	})
}

func (s *hookedStore) ListTables(ctx context.Context, opts store.ListTablesOptions) (store.TablePage, error) {
	var p store.TablePage
	var inner error
	err := s.h(ctx, Call{Op: "Store.ListTables"}, func(ctx context.Context) error {
		p, inner = s.s.ListTables(ctx, opts)
		return inner
	})
	return result(p, inner, err)
}

func (s *hookedStore) Table(name string) store.Table {
	return wrapTable(s.s.Table(name), s.h, s.o, s.observing)
}

func (s *hookedStore) Queue(name string) store.Queue { return ObserveQueue(s.s.Queue(name), s.h, s.o) }

func (s *hookedStore) Container(name string) store.Container {
	return ObserveContainer(s.s.Container(name), s.h, s.o)
}

// hookedACLStore is the wrapper of a store with stored access policies.
type hookedACLStore struct {
	hookedStore
	acl store.ACLStore
}

func (s *hookedACLStore) GetAccessPolicy(ctx context.Context, table string) ([]store.SignedIdentifier, error) {
	var ids []store.SignedIdentifier
	var inner error
	err := s.h(ctx, Call{Op: "Store.GetAccessPolicy", Name: table}, func(ctx context.Context) error {
		ids, inner = s.acl.GetAccessPolicy(ctx, table)
		return inner
	})
	return result(ids, inner, err)
}

func (s *hookedACLStore) SetAccessPolicy(ctx context.Context, table string, ids []store.SignedIdentifier) error {
	return s.h(ctx, Call{Op: "Store.SetAccessPolicy", Name: table, Write: true}, func(ctx context.Context) error {
		return s.acl.SetAccessPolicy(ctx, table, ids)
	})
}

type hookedTable struct {
	t store.Table
	h Hook
	o store.Observer
	// observing: h returns do's error as it is (Observe), so a typed read
	// hands the entity straight to the caller's reader.
	observing bool
}

func (t *hookedTable) Observer() store.Observer { return observer(t.o, t.t) }

func (t *hookedTable) Name() string { return t.t.Name() }

// Unwrap returns the table t wraps, for the layers that look for a
// capability of the table beneath the wrapper (encryption.CodecOf finds an
// encrypting table under instrumentation put around it).
func (t *hookedTable) Unwrap() store.Table { return t.t }

// write routes a single-entity write.
func (t *hookedTable) write(ctx context.Context, op string, a store.Action, f func(ctx context.Context) (store.ETag, error)) (store.ETag, error) {
	var tag store.ETag
	var inner error
	c := Call{Op: op, Name: t.t.Name(), Write: true, PartitionKey: a.Entity.PartitionKey, RowKey: a.Entity.RowKey, Action: a}
	err := t.h(ctx, c, func(ctx context.Context) error {
		tag, inner = f(ctx)
		return inner
	})
	return result(tag, inner, err)
}

func (t *hookedTable) Get(ctx context.Context, pk, rk string, opts *store.GetOptions) (store.Entity, error) {
	var e store.Entity
	var inner error
	err := t.h(ctx, Call{Op: "Table.Get", Name: t.t.Name(), PartitionKey: pk, RowKey: rk}, func(ctx context.Context) error {
		e, inner = t.t.Get(ctx, pk, rk, opts)
		return inner
	})
	return result(e, inner, err)
}

func (t *hookedTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	return t.write(ctx, "Table.Insert", store.Action{Kind: store.ActionInsert, Entity: e}, func(ctx context.Context) (store.ETag, error) {
		return t.t.Insert(ctx, e)
	})
}

func (t *hookedTable) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	kind := store.ActionUpdateMerge
	if mode == store.Replace {
		kind = store.ActionUpdateReplace
	}
	return t.write(ctx, "Table.Update", store.Action{Kind: kind, Entity: e, IfMatch: ifMatch}, func(ctx context.Context) (store.ETag, error) {
		return t.t.Update(ctx, e, mode, ifMatch)
	})
}

func (t *hookedTable) Upsert(ctx context.Context, e store.Entity, mode store.UpdateMode) (store.ETag, error) {
	kind := store.ActionUpsertMerge
	if mode == store.Replace {
		kind = store.ActionUpsertReplace
	}
	return t.write(ctx, "Table.Upsert", store.Action{Kind: kind, Entity: e}, func(ctx context.Context) (store.ETag, error) {
		return t.t.Upsert(ctx, e, mode)
	})
}

func (t *hookedTable) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	a := store.Action{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: pk, RowKey: rk}, IfMatch: ifMatch}
	_, err := t.write(ctx, "Table.Delete", a, func(ctx context.Context) (store.ETag, error) {
		return "", t.t.Delete(ctx, pk, rk, ifMatch)
	})
	return err
}

func (t *hookedTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	var p store.Page
	var inner error
	err := t.h(ctx, Call{Op: "Table.Query", Name: t.t.Name(), Query: q}, func(ctx context.Context) error {
		p, inner = t.t.Query(ctx, q)
		return inner
	})
	return result(p, inner, err)
}

func (t *hookedTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	c := Call{Op: "Table.Transact", Name: t.t.Name(), Write: true, Actions: actions}
	if len(actions) > 0 {
		c.PartitionKey, c.RowKey = actions[0].Entity.PartitionKey, actions[0].Entity.RowKey
	}
	var res []store.ActionResult
	var inner error
	err := t.h(ctx, c, func(ctx context.Context) error {
		res, inner = t.t.Transact(ctx, actions)
		return inner
	})
	return result(res, inner, err)
}

// hookedTypedTable is the wrapper of a table with the typed lane.
type hookedTypedTable struct {
	hookedTable
	tt store.TypedTable
}

func (t *hookedTypedTable) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	return t.write(ctx, "Table.Write", a, func(ctx context.Context) (store.ETag, error) {
		return t.tt.Write(ctx, a)
	})
}

// GetInto hands r the entity only when the hook passes the answer on: a
// read the hook fails after it was made hands r nothing, as GetInto
// promises.
func (t *hookedTypedTable) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, r store.EntityReader) error {
	if t.observing {
		return t.h(ctx, Call{Op: "Table.GetInto", Name: t.t.Name(), PartitionKey: pk, RowKey: rk}, func(ctx context.Context) error {
			return t.tt.GetInto(ctx, pk, rk, opts, r)
		})
	}
	var rec readLog
	var inner error
	err := t.h(ctx, Call{Op: "Table.GetInto", Name: t.t.Name(), PartitionKey: pk, RowKey: rk}, func(ctx context.Context) error {
		rec = rec[:0]
		inner = t.tt.GetInto(ctx, pk, rk, opts, &rec)
		return inner
	})
	if err != nil {
		return err
	}
	return rec.replay(r)
}

// QueryInto hands the entities to the caller's readers as the backend
// reads them; when the hook fails the request after it was made, the
// caller gets the error with n 0 and discards them, as QueryInto
// promises.
func (t *hookedTypedTable) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	var cont string
	var n int
	var inner error
	err := t.h(ctx, Call{Op: "Table.QueryInto", Name: t.t.Name(), Query: q}, func(ctx context.Context) error {
		cont, n, inner = t.tt.QueryInto(ctx, q, next)
		return inner
	})
	if err != nil {
		if err == inner {
			return cont, n, err
		}
		return "", 0, err
	}
	return cont, n, nil
}

// readLog is an EntityReader that keeps the members it is handed, in
// order, to hand them to another reader later.
type readLog []readItem

type readItem struct {
	op   byte
	name string
	s    string
	b    []byte
	i    int64
	f    float64
	t    time.Time
	g    store.GUID
}

func (r *readLog) add(m readItem) error { *r = append(*r, m); return nil }

func (r *readLog) SetPartitionKey(pk string) error { return r.add(readItem{op: 'p', s: pk}) }
func (r *readLog) SetRowKey(rk string) error       { return r.add(readItem{op: 'r', s: rk}) }
func (r *readLog) SetTimestamp(t time.Time) error  { return r.add(readItem{op: 'T', t: t}) }
func (r *readLog) SetETag(etag store.ETag) error   { return r.add(readItem{op: 'e', s: string(etag)}) }
func (r *readLog) SetString(name, v string) error {
	return r.add(readItem{op: 's', name: string([]byte(name)), s: v})
}
func (r *readLog) SetBinary(name string, v []byte) error {
	return r.add(readItem{op: 'b', name: string([]byte(name)), b: v})
}
func (r *readLog) SetBool(name string, v bool) error {
	var i int64
	if v {
		i = 1
	}
	return r.add(readItem{op: '?', name: string([]byte(name)), i: i})
}
func (r *readLog) SetInt32(name string, v int32) error {
	return r.add(readItem{op: '4', name: string([]byte(name)), i: int64(v)})
}
func (r *readLog) SetInt64(name string, v int64) error {
	return r.add(readItem{op: '8', name: string([]byte(name)), i: v})
}
func (r *readLog) SetDouble(name string, v float64) error {
	return r.add(readItem{op: 'd', name: string([]byte(name)), f: v})
}
func (r *readLog) SetTime(name string, v time.Time) error {
	return r.add(readItem{op: 't', name: string([]byte(name)), t: v})
}
func (r *readLog) SetGUID(name string, v store.GUID) error {
	return r.add(readItem{op: 'g', name: string([]byte(name)), g: v})
}

func (r readLog) replay(to store.EntityReader) error {
	for _, m := range r {
		var err error
		switch m.op {
		case 'p':
			err = to.SetPartitionKey(m.s)
		case 'r':
			err = to.SetRowKey(m.s)
		case 'T':
			err = to.SetTimestamp(m.t)
		case 'e':
			err = to.SetETag(store.ETag(m.s))
		case 's':
			err = to.SetString(m.name, m.s)
		case 'b':
			err = to.SetBinary(m.name, m.b)
		case '?':
			err = to.SetBool(m.name, m.i != 0)
		case '4':
			err = to.SetInt32(m.name, int32(m.i))
		case '8':
			err = to.SetInt64(m.name, m.i)
		case 'd':
			err = to.SetDouble(m.name, m.f)
		case 't':
			err = to.SetTime(m.name, m.t)
		case 'g':
			err = to.SetGUID(m.name, m.g)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

type hookedQueue struct {
	q store.Queue
	h Hook
	o store.Observer
}

func (q *hookedQueue) Observer() store.Observer { return observer(q.o, q.q) }

func (q *hookedQueue) Name() string { return q.q.Name() }

func (q *hookedQueue) Create(ctx context.Context) error {
	return q.h(ctx, Call{Op: "Queue.Create", Name: q.q.Name(), Write: true}, q.q.Create)
}

func (q *hookedQueue) Delete(ctx context.Context) error {
	return q.h(ctx, Call{Op: "Queue.Delete", Name: q.q.Name(), Write: true}, q.q.Delete)
}

func (q *hookedQueue) Put(ctx context.Context, body []byte, opts *store.PutOptions) (store.Message, error) {
	var m store.Message
	var inner error
	err := q.h(ctx, Call{Op: "Queue.Put", Name: q.q.Name(), Write: true, Body: body}, func(ctx context.Context) error {
		m, inner = q.q.Put(ctx, body, opts)
		return inner
	})
	return result(m, inner, err)
}

func (q *hookedQueue) Get(ctx context.Context, n int, visibility time.Duration) ([]store.Message, error) {
	var ms []store.Message
	var inner error
	err := q.h(ctx, Call{Op: "Queue.Get", Name: q.q.Name(), Write: true}, func(ctx context.Context) error {
		ms, inner = q.q.Get(ctx, n, visibility)
		return inner
	})
	return result(ms, inner, err)
}

func (q *hookedQueue) Peek(ctx context.Context, n int) ([]store.Message, error) {
	var ms []store.Message
	var inner error
	err := q.h(ctx, Call{Op: "Queue.Peek", Name: q.q.Name()}, func(ctx context.Context) error {
		ms, inner = q.q.Peek(ctx, n)
		return inner
	})
	return result(ms, inner, err)
}

func (q *hookedQueue) Update(ctx context.Context, id, popReceipt string, body []byte, visibility time.Duration) (store.Message, error) {
	var m store.Message
	var inner error
	err := q.h(ctx, Call{Op: "Queue.Update", Name: q.q.Name(), Write: true, Body: body}, func(ctx context.Context) error {
		m, inner = q.q.Update(ctx, id, popReceipt, body, visibility)
		return inner
	})
	return result(m, inner, err)
}

func (q *hookedQueue) DeleteMessage(ctx context.Context, id, popReceipt string) error {
	return q.h(ctx, Call{Op: "Queue.DeleteMessage", Name: q.q.Name(), Write: true}, func(ctx context.Context) error {
		return q.q.DeleteMessage(ctx, id, popReceipt)
	})
}

type hookedContainer struct {
	c store.Container
	h Hook
	o store.Observer
}

func (k *hookedContainer) Observer() store.Observer { return observer(k.o, k.c) }

func (k *hookedContainer) Name() string { return k.c.Name() }

func (k *hookedContainer) Create(ctx context.Context) error {
	return k.h(ctx, Call{Op: "Container.Create", Name: k.c.Name(), Write: true}, k.c.Create)
}

func (k *hookedContainer) Delete(ctx context.Context) error {
	return k.h(ctx, Call{Op: "Container.Delete", Name: k.c.Name(), Write: true}, k.c.Delete)
}

func (k *hookedContainer) Put(ctx context.Context, name string, data []byte, opts *store.BlobPutOptions) (store.BlobProps, error) {
	var p store.BlobProps
	var inner error
	err := k.h(ctx, Call{Op: "Container.Put", Name: k.c.Name(), Write: true, Blob: name, Body: data}, func(ctx context.Context) error {
		p, inner = k.c.Put(ctx, name, data, opts)
		return inner
	})
	return result(p, inner, err)
}

func (k *hookedContainer) Get(ctx context.Context, name string) ([]byte, store.BlobProps, error) {
	var d []byte
	var p store.BlobProps
	var inner error
	err := k.h(ctx, Call{Op: "Container.Get", Name: k.c.Name(), Blob: name}, func(ctx context.Context) error {
		d, p, inner = k.c.Get(ctx, name)
		return inner
	})
	if err != nil && err != inner {
		return nil, store.BlobProps{}, err
	}
	return d, p, err
}

func (k *hookedContainer) DeleteBlob(ctx context.Context, name string, ifMatch store.ETag) error {
	return k.h(ctx, Call{Op: "Container.DeleteBlob", Name: k.c.Name(), Write: true, Blob: name}, func(ctx context.Context) error {
		return k.c.DeleteBlob(ctx, name, ifMatch)
	})
}

func (k *hookedContainer) List(ctx context.Context, opts store.BlobListOptions) (store.BlobPage, error) {
	var p store.BlobPage
	var inner error
	err := k.h(ctx, Call{Op: "Container.List", Name: k.c.Name()}, func(ctx context.Context) error {
		p, inner = k.c.List(ctx, opts)
		return inner
	})
	return result(p, inner, err)
}

func (k *hookedContainer) CreateAppend(ctx context.Context, name string, opts *store.BlobPutOptions) (store.BlobProps, error) {
	var p store.BlobProps
	var inner error
	err := k.h(ctx, Call{Op: "Container.CreateAppend", Name: k.c.Name(), Write: true, Blob: name}, func(ctx context.Context) error {
		p, inner = k.c.CreateAppend(ctx, name, opts)
		return inner
	})
	return result(p, inner, err)
}

func (k *hookedContainer) AppendBlock(ctx context.Context, name string, block []byte, opts *store.AppendOptions) (store.AppendResult, error) {
	var r store.AppendResult
	var inner error
	err := k.h(ctx, Call{Op: "Container.AppendBlock", Name: k.c.Name(), Write: true, Blob: name, Body: block}, func(ctx context.Context) error {
		r, inner = k.c.AppendBlock(ctx, name, block, opts)
		return inner
	})
	return result(r, inner, err)
}

func (k *hookedContainer) GetRange(ctx context.Context, name string, offset, count int64) ([]byte, store.BlobProps, error) {
	var d []byte
	var p store.BlobProps
	var inner error
	err := k.h(ctx, Call{Op: "Container.GetRange", Name: k.c.Name(), Blob: name}, func(ctx context.Context) error {
		d, p, inner = k.c.GetRange(ctx, name, offset, count)
		return inner
	})
	if err != nil && err != inner {
		return nil, store.BlobProps{}, err
	}
	return d, p, err
}
