package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/runner"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// BlobPropertyPrefix starts the property of the entity row that holds the
// reference of a Blob value: BlobPropertyPrefix + the blob's name. The
// reference is the text of a mapper.BlobRef (the blob's name, its length and
// CRC-32C), never the bytes.
const BlobPropertyPrefix = "TkBlob_"

// Limits and defaults of Blob values.
const (
	// DefaultMaxBlobSize is Options.MaxBlobSize's default: 64 MiB.
	DefaultMaxBlobSize = 64 << 20
	// MaxBlobSizeLimit is the largest Options.MaxBlobSize: a value is
	// written with one Put Blob request, which takes at most 5000 MiB.
	MaxBlobSizeLimit = 5000 << 20
	// DefaultBlobGrace is Options.BlobGrace's default: 1 hour.
	DefaultBlobGrace = time.Hour
)

// movedSuffix names the empty blob a Move puts beside a blob it carries
// to another partition: the blob is then named by a row that its name
// does not say, and SweepBlobs must leave it alone.
const movedSuffix = ".moved"

// blobReads bounds ReadBlob's reads of an entity whose blob a writer
// keeps replacing under it.
const blobReads = 5

// ErrBlobMissing matches the error of a read (ReadBlob) or a finding of
// Check whose entity names a blob that is not there: removed outside the
// model. It does not match store.ErrNotFound, which means the entity (or
// its value) is missing.
var ErrBlobMissing = errors.New("model: the blob the entity names is missing")

// ErrBlobCorrupt matches the error of ReadBlob when the blob does not hold
// what the entity's reference records (its length, its CRC-32C).
var ErrBlobCorrupt = errors.New("model: the blob does not hold what the entity's reference records")

// ErrBlobStale matches the error of a write that took longer than
// Options.BlobGrace/2 between writing its blobs and committing: it is not
// done (its blobs are removed) and may be sent again.
var ErrBlobStale = errors.New("model: the write's blobs are older than Options.BlobGrace/2")

// Blob declares a property kept in a blob of container: the []byte field
// that field points to (tag it `table:"-"`, so that the mapper leaves it
// out of the row) is written to a blob under a fresh name, and the entity
// row holds only its reference (BlobPropertyPrefix + name). name is the
// blob's name in the model (1 to 63 letters, digits or _).
//
// In a write, the field says what becomes of the value:
//
//   - non-empty: the bytes go to a new blob (at most Options.MaxBlobSize);
//     the blob the entity named before is removed after the commit;
//   - empty and not nil ([]byte{}): the entity has no value any more;
//   - nil: in a Merge (Update or Upsert with store.Merge) the entity keeps
//     the value it has; in an Insert or a Replace it has none.
//
// Reads (Get, Find, FindIn, FindAll, FindAllIn, Log) never fetch the
// bytes: the field comes back nil. ReadBlob fetches them. So a Replace of
// an entity that was read keeps its value only if the field is set
// again: use Merge to write other properties of an entity that was read.
func Blob[T any](name, container string, field func(*T) *[]byte) Feature[T] {
	return Feature[T]{kind: featBlob, name: name, container: container, bytes: field}
}

// blobDefaults checks and fills the blob options.
func blobDefaults(o *Options) error {
	switch {
	case o.MaxBlobSize < 0 || o.MaxBlobSize > MaxBlobSizeLimit:
		return refuse("Options.MaxBlobSize %d: want 0 (the default, %d) to %d bytes", o.MaxBlobSize, DefaultMaxBlobSize, MaxBlobSizeLimit)
	case o.BlobGrace < 0:
		return refuse("Options.BlobGrace %s is negative", o.BlobGrace)
	}
	if o.MaxBlobSize == 0 {
		o.MaxBlobSize = DefaultMaxBlobSize
	}
	if o.BlobGrace == 0 {
		o.BlobGrace = DefaultBlobGrace
	}
	return nil
}

// addBlob checks a Blob feature of Define and adds it to m.
func (m *Model[T]) addBlob(f *Feature[T]) error {
	if !indexName.MatchString(f.name) {
		return refuse("blob name %q: 1 to 63 letters, digits or _, starting with a letter", f.name)
	}
	if err := store.ValidateContainerName(f.container); err != nil {
		return fmt.Errorf("model: blob %s: %w", f.name, err)
	}
	if f.bytes == nil {
		return refuse("blob %s has no field function", f.name)
	}
	for _, b := range m.blobs {
		if b.name == f.name {
			return refuse("blob %s is declared twice", f.name)
		}
	}
	// The field must be the type's own and left out of the row.
	var v T
	p := f.bytes(&v)
	if p == nil {
		return refuse("blob %s: the field function returns nil: return the address of a []byte field of the value", f.name)
	}
	mark := []byte("tablekit-blob-field")
	*p = mark
	e, err := mapper.Encode(&v)
	if err != nil {
		return fmt.Errorf("model: blob %s: %w", f.name, err)
	}
	for k, val := range e.Properties {
		if b, ok := val.([]byte); ok && bytes.Equal(b, mark) {
			return refuse("blob %s: field %s is also a property of the row: tag it `table:\"-\"`", f.name, k)
		}
	}
	if m.ids == nil {
		m.ids = keys.NewIDGenerator(m.o.Now, nil)
	}
	m.blobs = append(m.blobs, f)
	return nil
}

// blobProp is the property of blob name's reference.
func blobProp(name string) string { return BlobPropertyPrefix + name }

// blobRefs returns the blob references a row holds.
func blobRefs(row *store.Entity) map[string]any {
	var out map[string]any
	for k, v := range row.Properties {
		if strings.HasPrefix(k, BlobPropertyPrefix) {
			if out == nil {
				out = map[string]any{}
			}
			out[k] = v
		}
	}
	return out
}

// splitRefs returns props without its blob references, and those.
func splitRefs(props map[string]any) (rest, refs map[string]any) {
	rest = make(map[string]any, len(props))
	for k, v := range props {
		if strings.HasPrefix(k, BlobPropertyPrefix) {
			if refs == nil {
				refs = map[string]any{}
			}
			refs[k] = v
			continue
		}
		rest[k] = v
	}
	return rest, refs
}

// refOf reads the reference row holds for blob name (false and no error when
// it holds none).
func refOf(row *store.Entity, name string) (mapper.BlobRef, bool, error) {
	s, _ := row.Properties[blobProp(name)].(string)
	if s == "" {
		return mapper.BlobRef{}, false, nil
	}
	r, err := mapper.ParseBlobRef(s)
	return r, err == nil, err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blobItem is what a write does with one declared blob.
type blobItem struct {
	container string
	given     bool   // the field was not nil
	ref       string // the new reference, "" for none
	name      string // the new blob's name
	data      []byte
}

// blobWrite is the blobs of one write, put before its transaction.
type blobWrite struct {
	at    time.Time  // when the first put began (zero: nothing put)
	items []blobItem // one per declared blob, in declaration order
}

// blobValues reads v's blob fields, refusing a value over the limit
// before anything is written. nil when the model declares no blob.
func (m *Model[T]) blobValues(v *T) (*blobWrite, error) {
	if len(m.blobs) == 0 {
		return nil, nil
	}
	bw := &blobWrite{items: make([]blobItem, len(m.blobs))}
	for i, f := range m.blobs {
		it := &bw.items[i]
		it.container = f.container
		p := f.bytes(v)
		if p == nil || *p == nil {
			continue
		}
		it.given = true
		if n := int64(len(*p)); n > m.o.MaxBlobSize {
			e := store.Errorf(store.CodeRequestBodyTooLarge, 413, "model: blob %s of %T is %d bytes, Options.MaxBlobSize is %d", f.name, v, n, m.o.MaxBlobSize)
			e.Source = store.SourceClient
			return nil, e
		}
		if len(*p) > 0 {
			it.data = *p
		}
	}
	return bw, nil
}

// blobName makes a fresh blob name for value name of entity (pk, id):
// <table>/_<pk>/_<id>/<name>/<time-ordered random id>, each key escaped by
// keys.Escape (no '/', no '.' that ends a segment).
func (m *Model[T]) blobName(pk, id, name string) (string, error) {
	rid, err := m.ids.New()
	if err != nil {
		return "", err
	}
	epk, err1 := keys.Escape(pk)
	eid, err2 := keys.Escape(id)
	if err := errors.Join(err1, err2); err != nil {
		return "", refuse("entity (%q, %q): the keys cannot name its blob %s: %v", pk, id, name, err)
	}
	n := m.table + "/_" + epk + "/_" + eid + "/" + name + "/" + rid
	// The longest name: the marker of a move beside it.
	if u := store.UTF16Len(n + movedSuffix); u > store.MaxBlobNameUnits {
		e := store.Errorf(store.CodeKeyValueTooLarge, 400,
			"model: entity (%q, %q): the keys are too long to name its blob %s: the name would be %d characters, the limit is %d",
			pk, id, name, u, store.MaxBlobNameUnits)
		e.Source = store.SourceClient
		return "", e
	}
	return n, nil
}

// putBlobs writes the new values of bw to fresh blobs, before the
// transaction that names them. On an error the blobs it may have written
// are removed (best effort: what is left is an orphan for SweepBlobs).
func (m *Model[T]) putBlobs(ctx context.Context, pk, id string, bw *blobWrite) error {
	if bw == nil {
		return nil
	}
	for i := range bw.items {
		it := &bw.items[i]
		if it.data == nil {
			continue
		}
		name, err := m.blobName(pk, id, m.blobs[i].name)
		if err != nil {
			return err
		}
		it.name = name
		it.ref = mapper.BlobRef{Blob: name, Encoding: mapper.BlobEncodingNone, Size: int64(len(it.data)),
			CRC32C: crc32.Checksum(it.data, castagnoli)}.String()
	}
	for i := range bw.items {
		it := &bw.items[i]
		if it.data == nil {
			continue
		}
		if bw.at.IsZero() {
			bw.at = m.o.Now()
		}
		if err := m.putFresh(ctx, it); err != nil {
			m.dropBlobs(ctx, bw)
			// The entity is not written, whatever became of the blob:
			// the error says so (it does not match ErrUnknownOutcome).
			var se *store.Error
			if errors.As(err, &se) && se.Unknown {
				c := *se
				c.Unknown = false
				err = &c
			}
			return fmt.Errorf("model: blob %s of entity (%q, %q), the entity not written: %w", m.blobs[i].name, pk, id, err)
		}
	}
	return nil
}

// putFresh writes one new blob with If-None-Match *: it overwrites
// nothing. The name is this write's alone, so after a lost answer the put
// is sent again, and BlobAlreadyExists then means the first one landed.
func (m *Model[T]) putFresh(ctx context.Context, it *blobItem) error {
	c := m.st.Container(it.container)
	var err error
	for try := 0; try < 3; try++ {
		_, err = c.Put(ctx, it.name, it.data, &store.BlobPutOptions{IfNoneMatchAny: true})
		switch {
		case err == nil:
			return nil
		case try > 0 && store.Code(err) == store.CodeBlobAlreadyExists:
			return nil // the earlier send landed
		case errors.Is(err, store.ErrUnknownOutcome), errors.Is(err, store.ErrTransient):
			if ctx.Err() != nil {
				return err
			}
			continue
		}
		return err
	}
	return err
}

// dropBlobs removes the blobs of a write that did not commit: no row
// names them, and none ever will (only their writer knows their names).
func (m *Model[T]) dropBlobs(ctx context.Context, bw *blobWrite) {
	if bw == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, it := range bw.items {
		if it.name != "" {
			_ = m.st.Container(it.container).DeleteBlob(ctx, it.name, "")
		}
	}
}

// planBlobs sets the references of the entity row about to be written
// (props, nil for a delete) from the write's blobs and the row read
// (cur, when found), and records in w the removal of every blob the
// row named that it will not name any more: a step of the write's
// operation, run after the commit.
func (m *Model[T]) planBlobs(w *txWrite, k writeKind, found bool, cur *store.Entity, mode store.UpdateMode, props map[string]any) error {
	w.blobSteps = nil
	if len(m.blobs) == 0 {
		return nil
	}
	if bw := w.blobs; bw != nil && !bw.at.IsZero() {
		if d := m.o.Now().Sub(bw.at); d > m.o.BlobGrace/2 {
			return fmt.Errorf("%w: %s since they were written, Options.BlobGrace is %s: send the write again", ErrBlobStale, d, m.o.BlobGrace)
		}
	}
	for i, f := range m.blobs {
		prop := blobProp(f.name)
		old := ""
		if found {
			old, _ = cur.Properties[prop].(string)
		}
		var it blobItem
		if w.blobs != nil {
			it = w.blobs.items[i]
		}
		now := ""
		switch {
		case k == wDelete:
		case it.ref != "":
			now = it.ref
		case it.given: // empty: no value
		case mode == store.Merge:
			now = old
		}
		if now != "" {
			props[prop] = now
		}
		if old == "" || old == now {
			continue
		}
		if r, err := mapper.ParseBlobRef(old); err == nil {
			w.blobSteps = append(w.blobSteps, m.blobStep(f.container, r.Blob))
		}
	}
	return nil
}

// blobData is the data of a step that removes a blob.
type blobData struct {
	Container string `json:"c"`
	Blob      string `json:"b"`
}

// blobKind is the kind of step that removes a blob the entity no longer
// names, registered by Define for a model with a Blob.
func (m *Model[T]) blobKind() eventual.StepKind {
	return eventual.StepKind("model:" + m.table + ":blob")
}

// blobStep is the step that removes blob name of container.
func (m *Model[T]) blobStep(container, name string) eventual.Step {
	data, _ := json.Marshal(blobData{Container: container, Blob: name})
	return eventual.Custom(m.blobKind(), "", store.Entity{}, data)
}

// handleBlobs registers the model's kind of blob step on its engine.
func (m *Model[T]) handleBlobs() error {
	if len(m.blobs) == 0 {
		return nil
	}
	return m.eng.Handle(m.blobKind(), eventual.StepHandler{Check: checkBlobStep, Run: m.runBlobStep})
}

func readBlobStep(s eventual.Step) (blobData, error) {
	var d blobData
	if err := json.Unmarshal(s.Data, &d); err != nil {
		return d, refuse("unreadable blob step: %v", err)
	}
	if err := store.ValidateContainerName(d.Container); err != nil {
		return d, err
	}
	return d, store.ValidateBlobName(d.Blob)
}

func checkBlobStep(s eventual.Step) error {
	_, err := readBlobStep(s)
	return err
}

// runBlobStep removes a blob an entity named before a write that
// committed: unconditionally (no row can name it again: names are never
// reused, and a Move carries only the blob the entity names), a missing
// blob being done.
func (m *Model[T]) runBlobStep(ctx context.Context, _ eventual.Operation, s eventual.Step) error {
	d, err := readBlobStep(s)
	if err != nil {
		return err
	}
	err = m.st.Container(d.Container).DeleteBlob(ctx, d.Blob, "")
	if err == nil || store.Code(err) == store.CodeBlobNotFound {
		return nil
	}
	return err
}

// blobsFit refuses a move of the entity row to dst unless dst declares
// every blob the row names, in the same container: the arrival names
// them.
func (m *Model[T]) blobsFit(dst *Model[T], row *store.Entity) error {
	for _, f := range m.blobs {
		if _, ok, _ := refOf(row, f.name); !ok {
			continue
		}
		fits := false
		for _, g := range dst.blobs {
			fits = fits || g.name == f.name && g.container == f.container
		}
		if !fits {
			return refuse("move to %s: the entity has a blob %s, which it does not declare in container %s", dst.table, f.name, f.container)
		}
	}
	return nil
}

// markMoved puts, beside each blob row names, the empty marker that
// tells SweepBlobs the blob may be named by a row in another partition.
// It runs before the move's transaction commits.
func (m *Model[T]) markMoved(ctx context.Context, row *store.Entity) error {
	for _, f := range m.blobs {
		r, ok, err := refOf(row, f.name)
		if err != nil || !ok {
			continue
		}
		if _, err := m.st.Container(f.container).Put(ctx, r.Blob+movedSuffix, []byte{}, nil); err != nil {
			return fmt.Errorf("model: move: mark blob %s of container %s: %w", r.Blob, f.container, err)
		}
	}
	return nil
}

// blob returns the declared blob name.
func (m *Model[T]) blob(name string) (*Feature[T], error) {
	for _, f := range m.blobs {
		if f.name == name {
			return f, nil
		}
	}
	return nil, refuse("no blob %q is declared", name)
}

// ReadBlob returns the value of blob name of entity (pk, id): a point
// read of the entity (as Get reads it, the entity in flight during a
// Move included), then a read of the blob its reference names, checked
// against the reference's length and CRC-32C. A writer that replaced the
// value in between may have removed that blob: the entity is then read
// again (at most 5 times). A missing entity, or one without a value, is
// an error matching store.ErrNotFound; a blob missing for good one
// matching ErrBlobMissing; a blob that does not hold what the reference
// records one matching ErrBlobCorrupt.
func (m *Model[T]) ReadBlob(ctx context.Context, pk, id, name string) ([]byte, error) {
	f, err := m.blob(name)
	if err != nil {
		return nil, err
	}
	last := ""
	for try := 0; ; try++ {
		_, row, err := m.get(ctx, pk, id)
		if err != nil {
			return nil, err
		}
		r, ok, err := refOf(&row, name)
		if err != nil {
			return nil, fmt.Errorf("%w: entity (%q, %q) of %s, blob %s: %w", ErrBlobCorrupt, pk, id, m.table, name, err)
		}
		if !ok {
			return nil, notFound("entity (%q, %q) of %s has no %s", pk, id, m.table, name)
		}
		data, _, err := m.st.Container(f.container).Get(ctx, r.Blob)
		if store.Code(err) == store.CodeBlobNotFound {
			if r.Blob != last && try+1 < blobReads {
				last = r.Blob
				continue // replaced since the read? read the entity again
			}
			return nil, fmt.Errorf("%w: entity (%q, %q) of %s names blob %s of container %s", ErrBlobMissing, pk, id, m.table, r.Blob, f.container)
		}
		if err != nil {
			return nil, err
		}
		if int64(len(data)) != r.Size || crc32.Checksum(data, castagnoli) != r.CRC32C {
			return nil, fmt.Errorf("%w: entity (%q, %q) of %s, blob %s of container %s: %d bytes, CRC-32C %08x; the reference records %d bytes, %08x",
				ErrBlobCorrupt, pk, id, m.table, r.Blob, f.container, len(data), crc32.Checksum(data, castagnoli), r.Size, r.CRC32C)
		}
		return data, nil
	}
}

// blobFindings checks the blobs the entity row of (pk, id) names: each
// must exist with the length its reference records. A blob found missing
// is judged on a fresh read of the row (a write may have replaced it and
// removed the blob since the scan). One small read (one byte) per blob.
func (m *Model[T]) blobFindings(ctx context.Context, pk, id string, row *store.Entity) ([]Finding, error) {
	var out []Finding
	for _, f := range m.blobs {
		r, ok, err := refOf(row, f.name)
		if !ok && err == nil {
			continue
		}
		detail := ""
		switch {
		case err != nil:
			detail = err.Error()
		default:
			_, p, gerr := m.st.Container(f.container).GetRange(ctx, r.Blob, 0, 1)
			switch {
			case gerr == nil && p.Size != r.Size:
				detail = fmt.Sprintf("blob %s of container %s holds %d bytes, the reference records %d", r.Blob, f.container, p.Size, r.Size)
			case store.Code(gerr) == store.CodeBlobNotFound:
				now, err := m.st.Table(m.table).Get(ctx, pk, row.RowKey, nil)
				if store.EntityNotFound(err) {
					continue
				}
				if err != nil {
					return nil, err
				}
				if r2, _, _ := refOf(&now, f.name); r2.Blob != r.Blob {
					continue // replaced since the scan
				}
				detail = fmt.Sprintf("blob %s of container %s is missing (%v)", r.Blob, f.container, ErrBlobMissing)
			case gerr != nil:
				return nil, fmt.Errorf("model: check: blob %s of container %s: %w", r.Blob, f.container, gerr)
			}
		}
		if detail != "" {
			src := eventual.Ref{Table: m.table, PartitionKey: pk, RowKey: row.RowKey}
			out = append(out, Finding{Drift: DriftBlob, Feature: f.name, Row: src, Entity: src, Detail: detail, scope: inBlob})
		}
	}
	return out, nil
}

// BlobSweepReport is what SweepBlobs found and did.
type BlobSweepReport struct {
	// Listed counts the blobs listed (markers of moves included).
	Listed int
	// Named counts the blobs kept because the entity their name gives
	// names them.
	Named int
	// Moved counts the blobs kept because a Move carried them to
	// another partition: the write that replaces them there removes them.
	Moved int
	// Young counts the blobs kept unchecked because they are not older
	// than Options.BlobGrace: a write may be about to name them.
	Young int
	// Foreign counts the blobs kept because their names are not the
	// model's.
	Foreign int
	// Orphans are the blobs found that no entity names, older than the
	// grace period; Removed counts those deleted (one changed since the
	// listing, or gone, is not).
	Orphans []string
	Removed int
	// Markers counts the markers of moves kept, MarkersRemoved those
	// removed (their blob is gone).
	Markers, MarkersRemoved int
	// EntityReads counts the point reads of entities made.
	EntityReads int
}

// String summarizes the report on one line.
func (r BlobSweepReport) String() string {
	return fmt.Sprintf("listed %d, named %d, moved %d, young %d, foreign %d, orphans %d, removed %d, markers %d (removed %d), entity reads %d",
		r.Listed, r.Named, r.Moved, r.Young, r.Foreign, len(r.Orphans), r.Removed, r.Markers, r.MarkersRemoved, r.EntityReads)
}

// blobParts is a parsed blob name of the model's layout.
type blobParts struct {
	pk, id, name string
	marker       bool // the marker of a move, beside its blob
}

// parseBlobName splits a blob name of m's layout; ok is false for any
// other name.
func (m *Model[T]) parseBlobName(n string) (p blobParts, ok bool) {
	rest, found := strings.CutPrefix(n, m.table+"/")
	if !found {
		return p, false
	}
	rest, p.marker = strings.CutSuffix(rest, movedSuffix)
	segs := strings.Split(rest, "/")
	if len(segs) != 4 || !strings.HasPrefix(segs[0], "_") || !strings.HasPrefix(segs[1], "_") || len(segs[3]) != keys.IDLen {
		return p, false
	}
	var err1, err2 error
	p.pk, err1 = keys.Unescape(segs[0][1:])
	p.id, err2 = keys.Unescape(segs[1][1:])
	p.name = segs[2]
	if err1 != nil || err2 != nil || !indexName.MatchString(p.name) {
		return p, false
	}
	return p, true
}

// SweepBlobs removes the blobs of the model's containers that no entity
// names and that are older than Options.BlobGrace: left by a write that
// crashed, or lost an answer, between writing its blobs and committing.
// Every blob it removes is one it listed under the model's table
// (<table>/...), checked against the current reference of the entity its
// name gives (one point read per entity with a blob older than the grace
// period; the blobs of an entity sort together), and deleted with
// If-Match its listed ETag, so a blob a row names is never removed:
//
//   - a blob the entity names is kept, and so is a blob younger than the
//     grace period (a write commits within BlobGrace/2 of its puts);
//   - a blob a Move carried to another partition has a marker beside it
//     (written before the move's transaction) and is kept: the write that
//     replaces it at the destination removes it;
//   - a marker whose blob is gone is removed.
//
// Its cost: one list request per 5,000 blobs, one point read per entity
// with a blob older than the grace period, one blob read per such blob
// its entity does not name, one delete per orphan.
func (m *Model[T]) SweepBlobs(ctx context.Context) (BlobSweepReport, error) {
	var rep BlobSweepReport
	if ctx == nil {
		return rep, refuse("the context is nil")
	}
	var done []string
	for _, f := range m.blobs {
		if slices.Contains(done, f.container) {
			continue
		}
		done = append(done, f.container)
		if err := m.sweepContainer(ctx, f.container, &rep); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// sweepContainer sweeps the model's blobs of one container.
func (m *Model[T]) sweepContainer(ctx context.Context, container string, rep *BlobSweepReport) error {
	c := m.st.Container(container)
	now := m.o.Now()
	old := func(b store.BlobProps) bool { return now.Sub(b.LastModified) >= m.o.BlobGrace }
	var (
		marker   string
		lastMain string // the last blob of the layout listed (not a marker)
		entKey   string // the entity whose row is in row
		row      store.Entity
		found    bool
	)
	for {
		page, err := c.List(ctx, store.BlobListOptions{Prefix: m.table + "/", Marker: marker})
		if err != nil {
			return fmt.Errorf("model: sweep of container %s: %w", container, err)
		}
		for i, b := range page.Blobs {
			rep.Listed++
			p, ok := m.parseBlobName(b.Name)
			if ok && !p.marker {
				lastMain = b.Name
			}
			switch {
			case !ok:
				rep.Foreign++
				continue
			case p.marker:
				// Its blob sorts right before it: listed already if it
				// exists.
				if lastMain == strings.TrimSuffix(b.Name, movedSuffix) || !old(b) {
					rep.Markers++
					continue
				}
				if err := m.dropListed(ctx, c, b); err != nil {
					return err
				}
				rep.MarkersRemoved++
				continue
			case !old(b):
				rep.Young++
				continue
			}
			if k := p.pk + "\x00" + p.id; k != entKey {
				ek, err := entityKey(p.id)
				if err != nil {
					rep.Foreign++
					continue
				}
				row, err = m.st.Table(m.table).Get(ctx, p.pk, ek, nil)
				rep.EntityReads++
				found = err == nil
				if err != nil && !store.EntityNotFound(err) {
					return fmt.Errorf("model: sweep of container %s: %w", container, err)
				}
				entKey = k
			}
			if found {
				if r, _, _ := refOf(&row, p.name); r.Blob == b.Name {
					rep.Named++
					continue
				}
			}
			// Not named where it was written: moved away, or an orphan.
			// The marker of a move is written before the move commits,
			// so it is seen here if the row read did not show the blob
			// because it moved.
			moved := i+1 < len(page.Blobs) && page.Blobs[i+1].Name == b.Name+movedSuffix
			if !moved {
				_, _, err := c.GetRange(ctx, b.Name+movedSuffix, 0, 0)
				switch {
				case err == nil:
					moved = true
				case store.Code(err) != store.CodeBlobNotFound:
					return fmt.Errorf("model: sweep of container %s: %w", container, err)
				}
			}
			if moved {
				rep.Moved++
				continue
			}
			rep.Orphans = append(rep.Orphans, b.Name)
			if err := m.dropListed(ctx, c, b); err != nil {
				return err
			}
			rep.Removed++
		}
		if page.NextMarker == "" {
			return nil
		}
		marker = page.NextMarker
	}
}

// dropListed deletes a listed blob If-Match its listed ETag: a blob
// written since, or gone, is left as it is.
func (m *Model[T]) dropListed(ctx context.Context, c store.Container, b store.BlobProps) error {
	err := c.DeleteBlob(ctx, b.Name, b.ETag)
	if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrPreconditionFailed) {
		return nil
	}
	return fmt.Errorf("model: sweep: delete blob %s of container %s: %w", b.Name, c.Name(), err)
}

// JobOptions tune SweepBlobsJob; nil, and every zero field, takes the
// default written beside the field.
type JobOptions struct {
	// Every is the period of the job: the pause between the end of one
	// run and the start of the next (default runner.DefaultEvery, 1
	// minute). It may not be negative.
	Every time.Duration
}

// SweepBlobsJob returns a job for a runner (core/runner) that runs
// SweepBlobs every opts.Every, named "model/<table>/blobs". NewRunner
// adds it for every model with a Blob among its tables. A negative
// period, or a model without a Blob, is refused with an error matching
// store.ErrInvalidInput. It does no I/O.
func (m *Model[T]) SweepBlobsJob(opts *JobOptions) (runner.Job, error) {
	return m.job("SweepBlobsJob", "blobs", len(m.blobs) > 0, "blob", opts, func(ctx context.Context) error {
		_, err := m.SweepBlobs(ctx)
		return err
	})
}

func (m *Model[T]) hasBlobs() bool { return len(m.blobs) > 0 }

// withRefs returns a copy of props with refs added.
func withRefs(props, refs map[string]any) map[string]any {
	out := maps.Clone(props)
	maps.Copy(out, refs)
	return out
}
