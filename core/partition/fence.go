package partition

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// Properties of the fence and tail rows: the fence is the head at
// FenceKey, with the default head's names.
const (
	// propVersion is the partition's version: the number of transactions
	// committed through the fence. The fence, the tail and the outbox
	// rows carry it.
	propVersion = DefaultHeadPrefix + "Version"
	// propWriters lists the request ids of the last writers, newest first,
	// separated by commas: the i-th (from 0) wrote version Version-i. It
	// is an Edm.Binary of those bytes rather than a string: the size of a
	// binary value is known without reading it, so the budget and the
	// store's checks cost the same whatever the history's length, and the
	// service's size formula counts it once, not twice.
	propWriters = DefaultHeadPrefix + "Writers"
)

// Limits of the writer history a fence keeps.
const (
	// DefaultHistory is how many writers a fence remembers by default.
	DefaultHistory = 32
	// MaxHistory bounds Options.History so the fence stays small.
	MaxHistory = 256
	// MaxRequestIDLen bounds a request id from Options.NewID.
	MaxRequestIDLen = 64
)

// ErrCorrupt matches an error about a reserved row (fence, tail or outbox
// row) whose properties the package did not write: a writer outside the
// package changed it.
var ErrCorrupt = errors.New("partition: reserved row is malformed")

// Fence is the state of a head row, the partition's fence or a [Head] at
// another RowKey: its version and ETag, and the ids of its recent
// writers. Get one from [Partition.Fence] or [Head.Fence], from a
// [Snapshot] or from a [Result], and pass it to BeginAt (of the same
// partition or head) to write only if nothing changed since.
type Fence struct {
	// Version counts the transactions committed to the partition through
	// the fence; 0 for a partition that never had one.
	Version int64
	// ETag is the fence row's ETag, "" when the row does not exist yet.
	ETag store.ETag

	pk, rk  string // the partition and the head's RowKey
	writers []byte // the Writers property: ids newest first, comma-separated
}

// Exists reports whether the head row exists.
func (f Fence) Exists() bool { return f.ETag != "" }

// RowKey returns the head row's RowKey: FenceKey for the partition's
// fence.
func (f Fence) RowKey() string { return f.rk }

// WriterOf returns the request id (Txn.RequestID) that wrote version v,
// if the head still remembers it (the last Options.History versions).
func (f Fence) WriterOf(v int64) (string, bool) { return f.writerOf(v) }

// writerOf returns the request id that wrote version v, if the fence still
// remembers it.
func (f Fence) writerOf(v int64) (string, bool) {
	i := f.Version - v
	if v < 1 || i < 0 {
		return "", false
	}
	rest := f.writers
	for ; len(rest) > 0; i-- {
		id, tail, _ := bytes.Cut(rest, []byte{','})
		if i == 0 {
			return string(id), true
		}
		rest = tail
	}
	return "", false
}

// next returns the version and the Writers property that request id
// writes on top of f, keeping at most history ids.
func (f Fence) next(id string, history int) (int64, []byte) {
	keep := len(f.writers) // the bytes of the history-1 newest old ids
	for i, n := 0, 0; i < len(f.writers); i++ {
		if f.writers[i] == ',' {
			if n++; n == history-1 {
				keep = i
				break
			}
		}
	}
	if history == 1 {
		keep = 0
	}
	w := make([]byte, 0, len(id)+1+keep)
	w = append(w, id...)
	if keep > 0 {
		w = append(append(w, ','), f.writers[:keep]...)
	}
	return f.Version + 1, w
}

// head names a head row: its RowKey and its own two properties. The
// partition's fence is the head at FenceKey with the properties
// TkHeadVersion and TkHeadWriters; a head at another RowKey (NewHead)
// names them after Options.HeadPrefix (by default the same), so they
// never meet the properties a caller stores on it.
type head struct {
	rk, version, writers string
}

// fenceHead is the partition's fence.
var fenceHead = head{rk: FenceKey, version: propVersion, writers: propWriters}

// fence reports whether h is the partition's fence, which a tail row
// follows in every transaction.
func (h head) fence() bool { return h.rk == FenceKey }

// entity builds the head row of version v listing writers w, with the
// caller's properties extra (nil for none).
func (h head) entity(pk string, v int64, writers []byte, extra map[string]any) store.Entity {
	props := make(map[string]any, len(extra)+2)
	for k, x := range extra {
		props[k] = x
	}
	props[h.version] = v
	props[h.writers] = writers
	return store.Entity{PartitionKey: pk, RowKey: h.rk, Properties: props}
}

// actions are the actions every transaction on top of f starts with: the
// head row of version v listing writers w, conditional on f (an insert
// when it does not exist), then, for the fence, the tail, unconditional.
// The fence is replaced; another head is replaced when the caller gives
// its properties (replace set) and merged otherwise, so a commit that
// only moves it (a resolution shutting a lost request out) keeps what
// the caller stored on it.
func (h head) actions(f Fence, v int64, w []byte, extra map[string]any, replace bool) []store.Action {
	kind := store.ActionUpdateReplace
	if !h.fence() && !replace {
		kind = store.ActionUpdateMerge
	}
	fa := store.Action{Kind: kind, Entity: h.entity(f.pk, v, w, extra), IfMatch: f.ETag}
	if !f.Exists() {
		fa.Kind, fa.IfMatch = store.ActionInsert, ""
	}
	if !h.fence() {
		return []store.Action{fa}
	}
	return []store.Action{fa, {Kind: store.ActionUpsertReplace, Entity: tailEntity(f.pk, v)}}
}

// decode decodes a head row read from the table.
func (h head) decode(e *store.Entity) (Fence, error) {
	f := Fence{pk: e.PartitionKey, rk: h.rk, ETag: e.ETag}
	v, err := versionIn(e, h.version)
	if err != nil {
		return f, err
	}
	f.Version = v
	b, ok := e.Properties[h.writers].([]byte)
	if !ok || len(b) == 0 {
		return f, corrupt(e, "property %s is %T of %d bytes, want a non-empty binary", h.writers, e.Properties[h.writers], len(b))
	}
	if n := int64(bytes.Count(b, []byte{','})) + 1; n > f.Version {
		return f, corrupt(e, "it lists %d writers for version %d", n, f.Version)
	}
	f.writers = b
	return f, nil
}

// read reads head h of partition pk; a missing row is the zero Fence of
// version 0.
func (h head) read(ctx context.Context, tbl store.Table, pk string) (Fence, error) {
	e, err := tbl.Get(ctx, pk, h.rk, nil)
	if errors.Is(err, store.ErrNotFound) && store.Code(err) == store.CodeResourceNotFound {
		return Fence{pk: pk, rk: h.rk}, nil
	}
	if err != nil {
		return Fence{pk: pk, rk: h.rk}, err
	}
	return h.decode(&e)
}

// fenceEntity and tailEntity build the two boundary rows of version v.
func fenceEntity(pk string, v int64, writers []byte) store.Entity {
	return fenceHead.entity(pk, v, writers, nil)
}

func tailEntity(pk string, v int64) store.Entity {
	return store.Entity{PartitionKey: pk, RowKey: TailKey, Properties: map[string]any{propVersion: v}}
}

// fenceOf decodes a fence row read from the table.
func fenceOf(e *store.Entity) (Fence, error) { return fenceHead.decode(e) }

// versionOf reads the Version of a fence or tail row.
func versionOf(e *store.Entity) (int64, error) { return versionIn(e, propVersion) }

// versionIn reads the version property name of a head or tail row.
func versionIn(e *store.Entity, name string) (int64, error) {
	v, ok := e.Properties[name].(int64)
	if !ok {
		return 0, corrupt(e, "property %s is %T, want an int64", name, e.Properties[name])
	}
	if v < 1 {
		return 0, corrupt(e, "%s is %d, want 1 or more", name, v)
	}
	return v, nil
}

func corrupt(e *store.Entity, format string, args ...any) error {
	return fmt.Errorf("%w: row %s of partition %s: %s", ErrCorrupt, quote(e.RowKey), quote(e.PartitionKey), fmt.Sprintf(format, args...))
}
