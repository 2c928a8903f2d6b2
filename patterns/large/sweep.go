package large

import (
	"context"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/store"
)

// SweepOptions shape a Sweep. The zero value removes the orphans of all
// of the table's blobs, as every cleanup of tablekit does by default.
type SweepOptions struct {
	// DryRun reports the orphans found and deletes nothing.
	DryRun bool
	// Partitions, when set, limits the sweep to the blobs of these
	// partitions' entities (one listing by name prefix each).
	Partitions []string
	// MaxBlobs stops the sweep after the page on which it has listed this
	// many blobs (0: no limit); SweepReport.Marker then resumes it.
	MaxBlobs int
	// Marker resumes a sweep that MaxBlobs stopped. Neither goes with
	// Partitions.
	Marker string
}

// SweepReport is what a sweep found and did.
type SweepReport struct {
	// Listed counts the blobs listed.
	Listed int
	// Referenced counts the blobs kept because their entity references them.
	Referenced int
	// Young counts the unreferenced blobs (or blobs not checked) kept
	// because they are not older than the grace period: a write may be
	// about to reference them.
	Young int
	// Foreign counts the blobs kept because their names are not in the
	// package's layout.
	Foreign int
	// Orphans are the blobs found that no entity references, older than
	// the grace period.
	Orphans []string
	// Removed counts the orphans deleted (none in a dry run).
	Removed int
	// EntityReads counts the point reads the sweep made: one per entity
	// with a blob older than the grace period.
	EntityReads int
	// Marker is "" when the sweep covered everything it was asked to;
	// otherwise pass it as SweepOptions.Marker to go on.
	Marker string
}

// String summarizes the report on one line.
func (r SweepReport) String() string {
	return fmt.Sprintf("listed %d, referenced %d, young %d, foreign %d, orphans %d, removed %d, entity reads %d",
		r.Listed, r.Referenced, r.Young, r.Foreign, len(r.Orphans), r.Removed, r.EntityReads)
}

// Sweep finds the blobs of the table's entities that no entity references
// and that are older than Options.Grace (left by a write or delete that
// crashed or lost an answer), and deletes them (unless opts.DryRun).
//
// A blob's name holds its entity's keys, and an entity's blobs sort
// together, so the sweep lists the table's blobs by name prefix (one
// request per 5,000 blobs) and reads each entity that has a blob older
// than the grace period once ($select of the large properties only): the
// cost is proportional to the blobs and to the entities that have blobs,
// never to the whole table. Blobs younger than the grace period are not
// checked: a write is allowed Grace/2 between its blob puts and its
// entity write. An orphan is deleted with If-Match its listed ETag.
func (s *Store[T]) Sweep(ctx context.Context, opts SweepOptions) (SweepReport, error) {
	var rep SweepReport
	if opts.MaxBlobs < 0 {
		return rep, refuse("SweepOptions.MaxBlobs %d: want 0 (no limit) or more", opts.MaxBlobs)
	}
	if (opts.Marker != "" || opts.MaxBlobs > 0) && len(opts.Partitions) > 0 {
		return rep, refuse("SweepOptions: MaxBlobs and Marker cannot go with Partitions")
	}
	prefixes := []string{tablePrefix(s.tableName)}
	if len(opts.Partitions) > 0 {
		prefixes = prefixes[:0]
		for _, pk := range opts.Partitions {
			prefixes = append(prefixes, tablePrefix(s.tableName)+"_"+escapeKey(pk)+"/")
		}
	}
	sw := &sweeper[T]{s: s, opts: opts, rep: &rep}
	for _, prefix := range prefixes {
		marker := opts.Marker
		for {
			page, err := s.container.List(ctx, store.BlobListOptions{Prefix: prefix, Marker: marker})
			if err != nil {
				return rep, fmt.Errorf("large: sweep: list container %s: %w", s.container.Name(), err)
			}
			for _, b := range page.Blobs {
				rep.Listed++
				if err := sw.add(ctx, b); err != nil {
					return rep, err
				}
			}
			marker = page.NextMarker
			if marker == "" {
				break
			}
			if opts.MaxBlobs > 0 && rep.Listed >= opts.MaxBlobs {
				rep.Marker = marker
				return rep, sw.flush(ctx)
			}
		}
		if err := sw.flush(ctx); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// sweeper gathers the blobs of one entity (they are listed together) and
// judges them together.
type sweeper[T any] struct {
	s      *Store[T]
	opts   SweepOptions
	rep    *SweepReport
	prefix string // the entity prefix of group
	key    nameParts
	group  []store.BlobProps
}

func (w *sweeper[T]) add(ctx context.Context, b store.BlobProps) error {
	p, ok := parseName(w.s.tableName, b.Name)
	if !ok {
		w.rep.Foreign++
		return nil
	}
	prefix := entityPrefix(w.s.tableName, p.pk, p.rk)
	if prefix != w.prefix {
		if err := w.flush(ctx); err != nil {
			return err
		}
		w.prefix, w.key = prefix, p
	}
	w.group = append(w.group, b)
	return nil
}

// flush judges the gathered blobs of one entity.
func (w *sweeper[T]) flush(ctx context.Context) error {
	group := w.group
	w.group, w.prefix = nil, ""
	if len(group) == 0 {
		return nil
	}
	s := w.s
	now := s.o.Now()
	old := func(b store.BlobProps) bool { return now.Sub(b.LastModified) > s.o.Grace }
	anyOld := false
	for _, b := range group {
		anyOld = anyOld || old(b)
	}
	if !anyOld {
		w.rep.Young += len(group)
		return nil
	}
	// The properties the blobs' names give, whatever type declares them:
	// a reference is recognized by its text, so the blobs of another kind
	// of entity in the same table are judged as rightly as T's.
	var sel []string
	for _, b := range group {
		if p, _ := parseName(s.tableName, b.Name); !slices.Contains(sel, p.prop) {
			sel = append(sel, p.prop)
		}
	}
	w.rep.EntityReads++
	e, err := s.table.Get(ctx, w.key.pk, w.key.rk, &store.GetOptions{Select: sel})
	var holder *store.Entity
	switch {
	case err == nil:
		holder = &e
	case !store.EntityNotFound(err):
		return fmt.Errorf("large: sweep: read %s: %w", entityName(s.tableName, w.key.pk, w.key.rk), err)
	}
	var orphans []store.BlobProps
	for _, b := range group {
		switch {
		case holder != nil && holdsRef(holder, b.Name):
			w.rep.Referenced++
		case !old(b):
			w.rep.Young++
		default:
			orphans = append(orphans, b)
			w.rep.Orphans = append(w.rep.Orphans, b.Name)
		}
	}
	if w.opts.DryRun {
		return nil
	}
	errs := s.each(ctx, len(orphans), func(ctx context.Context, i int) error {
		err := s.container.DeleteBlob(ctx, orphans[i].Name, orphans[i].ETag)
		if err != nil && store.Code(err) != store.CodeBlobNotFound {
			return fmt.Errorf("large: sweep: delete blob %s: %w", quote(orphans[i].Name), err)
		}
		return nil
	})
	for _, err := range errs {
		if err == nil {
			w.rep.Removed++
		}
	}
	return firstErr(errs)
}

// holdsRef reports whether the property a blob's name gives holds a
// reference to it, stored as either type.
func holdsRef(e *store.Entity, blob string) bool {
	var text string
	switch x := e.Properties[blobProp(blob)].(type) {
	case string:
		text = x
	case []byte:
		text = string(x)
	default:
		return false
	}
	r, err := ParseRef(text)
	return err == nil && r.Blob == blob
}
