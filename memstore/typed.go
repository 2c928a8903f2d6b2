package memstore

import (
	"context"
	"encoding/binary"
	"math"
	"sync"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

var _ store.TypedTable = (*tableHandle)(nil)

// Write implements store.TypedTable: one write, its properties taken from
// a.Source through store.WriteSource (every rule checked) when it is set,
// then applied as Insert, Update, Upsert or Delete apply it, faults
// included.
func (h *tableHandle) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	var op Operation
	switch a.Kind {
	case store.ActionInsert:
		op = OpInsert
	case store.ActionUpdateMerge, store.ActionUpdateReplace:
		op = OpUpdate
	case store.ActionUpsertMerge, store.ActionUpsertReplace:
		op = OpUpsert
	case store.ActionDelete:
		op = OpDelete
		a.Entity.Properties, a.Source = nil, nil
	default:
		return "", store.Errorf(store.CodeInvalidInput, 400, "unknown action kind %d", int(a.Kind))
	}
	if a.Source == nil {
		return h.write(ctx, op, a)
	}
	if a.Entity.Properties != nil {
		return "", store.Errorf(store.CodeInvalidInput, 400, "entity (PartitionKey %q, RowKey %q): an action has both Source and Entity.Properties: set one", a.Entity.PartitionKey, a.Entity.RowKey)
	}
	if mergeKind(a.Kind) {
		// A merge combines with the stored properties, which it needs as
		// a map.
		props, err := store.SourceProperties(a.Entity.PartitionKey, a.Entity.RowKey, a.Source, false)
		if err != nil {
			return "", err
		}
		a.Entity.Properties, a.Source = props, nil
		return h.write(ctx, op, a)
	}
	// Insert and replace: the source is packed straight into the record's
	// layout, every rule checked on the way (store.WriteSource).
	p := packers.Get().(*packer)
	defer p.release()
	if _, err := store.WriteSource(a.Entity.PartitionKey, a.Entity.RowKey, a.Source, false, p); err != nil {
		return "", err
	}
	if a.Kind.NeedsIfMatch() {
		if err := store.ValidateETag(a.IfMatch); err != nil {
			return "", err
		}
	}
	return h.sendOne(ctx, op, a, p)
}

// mergeKind reports an update or upsert that merges.
func mergeKind(k store.ActionKind) bool {
	return k == store.ActionUpdateMerge || k == store.ActionUpsertMerge
}

// packers keeps the buffers sources are packed into (each record copies
// its bytes).
var packers = sync.Pool{New: func() any { return &packer{b: make([]byte, 0, 512)} }}

// release returns p to packers, unless it grew past 64 KiB.
func (p *packer) release() {
	if cap(p.b) > 64<<10 {
		return
	}
	p.b, p.n = p.b[:0], 0
	packers.Put(p)
}

// GetInto implements store.TypedTable: the record's members go to r
// straight from its packed form, without a map.
func (h *tableHandle) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, rd store.EntityReader) error {
	sel, err := driver.ValidateGet(pk, rk, opts)
	if err != nil {
		return err
	}
	t, err := h.begin(ctx, OpGet)
	if err != nil {
		driver.ReportTryErr(ctx, err)
		return err
	}
	t.mu.RLock()
	r := t.get(pk, rk)
	t.mu.RUnlock()
	if r == nil {
		err := notFound(h.name, pk, rk)
		driver.ReportTryErr(ctx, err)
		return err
	}
	driver.ReportTryErr(ctx, nil)
	return r.read(sel, rd)
}

// QueryInto implements store.TypedTable: the page Query would return,
// found by the same code (page: the request's checks, faults, the
// throughput model's admission and charge, short pages, the continuation
// token), each matching record handed from its packed form to the reader
// next returns, after the table's lock is released.
func (h *tableHandle) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	matched, cont, err := h.page(ctx, q)
	if err != nil {
		return "", 0, err
	}
	for _, r := range matched {
		if err := r.read(q.Select, next()); err != nil {
			return "", 0, err
		}
	}
	return cont, len(matched), nil
}

// read hands the record to rd; sel, when non-empty, projects its
// properties.
func (r record) read(sel []string, rd store.EntityReader) error {
	if err := rd.SetPartitionKey(r.pk()); err != nil {
		return err
	}
	if err := rd.SetRowKey(r.rk()); err != nil {
		return err
	}
	if err := rd.SetTimestamp(r.timestamp()); err != nil {
		return err
	}
	if err := rd.SetETag(r.etag()); err != nil {
		return err
	}
	var rerr error
	eachProp(r.props(), func(name string, tag byte, raw []byte) bool {
		if len(sel) > 0 && !selected(sel, name) {
			return true
		}
		rerr = readValue(rd, name, tag, raw)
		return rerr == nil
	})
	return rerr
}

func selected(sel []string, name string) bool {
	for _, s := range sel {
		if s == name {
			return true
		}
	}
	return false
}

// readValue hands one packed value to rd with its type's method.
func readValue(rd store.EntityReader, name string, tag byte, raw []byte) error {
	switch tag {
	case tagString:
		return rd.SetString(name, unsafeString(raw))
	case tagBinary:
		return rd.SetBinary(name, append(make([]byte, 0, len(raw)), raw...))
	case tagBool:
		return rd.SetBool(name, raw[0] == 1)
	case tagInt32:
		return rd.SetInt32(name, int32(binary.LittleEndian.Uint32(raw)))
	case tagInt64:
		return rd.SetInt64(name, int64(binary.LittleEndian.Uint64(raw)))
	case tagDouble:
		return rd.SetDouble(name, math.Float64frombits(binary.LittleEndian.Uint64(raw)))
	case tagDateTime:
		return rd.SetTime(name, ticksToTime(int64(binary.LittleEndian.Uint64(raw))))
	case tagGUID:
		var g store.GUID
		copy(g[:], raw)
		return rd.SetGUID(name, g)
	}
	return nil
}
