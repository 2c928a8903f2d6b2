package large

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// mode is the kind of a logical write.
type mode int

const (
	modeInsert mode = iota // the entity must not exist
	modeUpdate             // the entity must have the value's ETag
	modePut                // whatever is stored
)

// Insert adds *v as a new entity, its values too large for the entity in
// fresh blobs, and stores the new ETag in v's etag field. An existing
// entity is an error matching store.ErrAlreadyExists. Cost: one blob put
// per value that goes to a blob, then one insert.
func (s *Store[T]) Insert(ctx context.Context, v *T) error { return s.write(ctx, v, modeInsert) }

// Update replaces the stored entity with *v if it still has the ETag in
// v's etag field, and stores the new ETag in v. A stale ETag is an error
// matching store.ErrPreconditionFailed; a value without an ETag is
// mapper.ErrNoETag. The blobs of the version replaced are removed once
// the new version is committed. Cost: one point read (the version
// replaced and its blobs), the blob puts, one update, one delete per old
// blob.
func (s *Store[T]) Update(ctx context.Context, v *T) error { return s.write(ctx, v, modeUpdate) }

// Put inserts *v or replaces whatever version is stored, and stores the
// new ETag in v. Each try is conditional on the version it read, so the
// blobs of the version replaced are known exactly and removed after the
// commit; a try that loses to a concurrent writer reads again, up to
// Options.Attempts tries (then ErrContention). When its answer is lost
// and another writer changed the entity before the read-back, the error
// matches store.ErrUnknownOutcome; Put writes whatever is stored, so
// calling it again is safe.
func (s *Store[T]) Put(ctx context.Context, v *T) error { return s.write(ctx, v, modePut) }

// current is the stored version a write replaces.
type current struct {
	exists bool
	entity store.Entity // its large properties only
}

// current reads the stored version of (pk, rk): its ETag and its large
// properties (the blobs it references).
func (s *Store[T]) current(ctx context.Context, pk, rk string) (current, error) {
	e, err := s.table.Get(ctx, pk, rk, &store.GetOptions{Select: s.selLarge})
	if err != nil {
		if store.EntityNotFound(err) {
			return current{}, nil
		}
		return current{}, fmt.Errorf("large: read %s: %w", entityName(s.tableName, pk, rk), err)
	}
	return current{exists: true, entity: e}, nil
}

// outcome is what became of one try of an entity write.
type outcome int

const (
	committed  outcome = iota // the entity as planned is stored
	notApplied                // the try did not change the entity: trying again is safe
	failed                    // it did not apply, and trying again would not help
	unknown                   // it may have applied; a read-back could not tell
)

// write is Insert, Update and Put: blobs first, under fresh names, then
// the entity (conditional on the version read), then the blobs of the
// version replaced.
func (s *Store[T]) write(ctx context.Context, v *T, m mode) error {
	p, err := s.plan(v)
	if err != nil {
		return err
	}
	pk, rk := p.entity.PartitionKey, p.entity.RowKey
	var want store.ETag
	if m == modeUpdate {
		if want = mapper.ETagOf(v); want == "" {
			return fmt.Errorf("large: update %s: %w", entityName(s.tableName, pk, rk), mapper.ErrNoETag)
		}
	}
	f := &fresh[T]{s: s, p: p}
	defer f.abandon(ctx)
	var last error
	for try := 0; ; try++ {
		if try > 0 {
			if try >= s.o.Attempts {
				return fmt.Errorf("large: write %s: %d tries lost to concurrent writers or faults: %w (last: %w)",
					entityName(s.tableName, pk, rk), try, ErrContention, last)
			}
			if err := s.backoff(ctx, try); err != nil {
				return err
			}
		}
		var cur current
		if m != modeInsert {
			if cur, err = s.current(ctx, pk, rk); err != nil {
				if errors.Is(err, store.ErrTransient) {
					last = err
					continue
				}
				return err
			}
			if m == modeUpdate {
				if err := checkVersion(s.tableName, pk, rk, cur, want); err != nil {
					return err
				}
			}
		}
		if err := f.ensure(ctx); err != nil {
			return err
		}
		insert := m == modeInsert || !cur.exists
		var etag, ifMatch store.ETag
		if insert {
			etag, err = s.table.Insert(ctx, p.entity)
		} else {
			ifMatch = cur.entity.ETag
			etag, err = s.table.Update(ctx, p.entity, store.Replace, ifMatch)
		}
		out := committed
		if err != nil {
			out, etag, err = s.judge(ctx, f, err, insert, ifMatch, m)
		}
		switch out {
		case committed:
			f.keep = true
			s.dropBlobs(ctx, s.refsOf(&cur.entity), &p.entity)
			return mapper.SetETag(v, etag)
		case notApplied:
			last = err
			continue
		}
		return err
	}
}

// checkVersion refuses an update of a missing entity or of another
// version than the one the value was read at.
func checkVersion(table, pk, rk string, cur current, want store.ETag) error {
	if !cur.exists {
		return store.Errorf(store.CodeResourceNotFound, 404, "large: update %s: the entity does not exist", entityName(table, pk, rk))
	}
	if cur.entity.ETag != want {
		return store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
			"large: update %s: the entity has changed since it was read (ETag %s, not %s)", entityName(table, pk, rk), cur.entity.ETag, want)
	}
	return nil
}

// judge classifies a failed try of an entity write, reading the entity
// back when the answer was lost. On committed it returns the ETag read.
func (s *Store[T]) judge(ctx context.Context, f *fresh[T], err error, insert bool, ifMatch store.ETag, m mode) (outcome, store.ETag, error) {
	pk, rk := f.p.entity.PartitionKey, f.p.entity.RowKey
	wrap := func(err error) error {
		return fmt.Errorf("large: write %s: %w", entityName(s.tableName, pk, rk), err)
	}
	switch {
	case errors.Is(err, store.ErrUnknownOutcome):
		return s.settle(ctx, f, err, insert, ifMatch)
	case errors.Is(err, store.ErrTransient):
		return notApplied, "", wrap(err)
	case m == modePut && (errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrAlreadyExists) ||
		store.Code(err) == store.CodeResourceNotFound):
		// Another writer got there first: read again.
		return notApplied, "", wrap(err)
	}
	return failed, "", wrap(err)
}

// settle decides a write whose answer was lost by reading the entity
// back: it references the fresh blobs (or, for a write without blobs,
// holds exactly what was written): committed; it still has the ETag the
// write was conditional on, or it is absent: not applied. Otherwise it
// cannot tell (another writer changed the entity since), and the fresh
// blobs, which the entity does not reference and never will, are removed.
func (s *Store[T]) settle(ctx context.Context, f *fresh[T], cause error, insert bool, ifMatch store.ETag) (outcome, store.ETag, error) {
	pk, rk := f.p.entity.PartitionKey, f.p.entity.RowKey
	name := entityName(s.tableName, pk, rk)
	e, err := s.readBack(ctx, pk, rk, nil)
	switch {
	case store.EntityNotFound(err):
		return notApplied, "", resolved(fmt.Sprintf("large: write %s", name), cause)
	case err != nil:
		f.keep = true // the entity may reference them
		return unknown, "", fmt.Errorf("large: write %s: %w; the read-back failed (%v): the fresh blobs are kept for the sweeper", name, cause, err)
	case !insert && e.ETag == ifMatch:
		return notApplied, "", resolved(fmt.Sprintf("large: write %s", name), cause)
	}
	if len(f.p.blobs) > 0 {
		for _, b := range f.p.blobs {
			if s.references(&e, b.ref.Blob) {
				return committed, e.ETag, nil
			}
		}
	} else if sameProperties(e.Properties, f.p.entity.Properties) {
		return committed, e.ETag, nil
	}
	return unknown, "", fmt.Errorf("large: write %s: %w; a read-back could not tell whether it was applied (the entity changed since)", name, cause)
}

// resolved is cause, a lost answer a read-back showed was not applied:
// it no longer matches store.ErrUnknownOutcome (a *store.Error with
// Unknown cleared, so it matches store.ErrTransient instead).
func resolved(what string, cause error) error {
	const note = "a read-back shows it was not applied"
	var se *store.Error
	if !errors.As(cause, &se) {
		return fmt.Errorf("%s: %v; %s", what, cause, note)
	}
	c := *se
	c.Unknown = false
	if c.Message == "" {
		c.Message = note
	} else {
		c.Message += "; " + note
	}
	return fmt.Errorf("%s: %w", what, &c)
}

// readBack reads an entity to settle a lost answer, trying a read that
// failed transiently up to 3 times. It runs to the end even when ctx is
// canceled: the write it settles was sent.
func (s *Store[T]) readBack(ctx context.Context, pk, rk string, sel []string) (e store.Entity, err error) {
	var opts *store.GetOptions
	if sel != nil {
		opts = &store.GetOptions{Select: sel}
	}
	for range 3 {
		e, err = s.table.Get(context.WithoutCancel(ctx), pk, rk, opts)
		if err == nil || store.EntityNotFound(err) || !errors.Is(err, store.ErrTransient) {
			break
		}
	}
	return e, err
}

// sameProperties reports whether stored holds exactly the written properties.
func sameProperties(stored, written map[string]any) bool {
	n := 0
	for k, w := range written {
		if w == nil {
			continue
		}
		n++
		if x, ok := stored[k]; !ok || !store.SameValue(x, w) {
			return false
		}
	}
	return len(stored) == n
}

// dropBlobs removes the blobs of refs that entity keep does not
// reference (keep may be nil). It is best effort: a blob it fails to
// remove is an orphan, which Sweep removes later. It runs to the end even
// when ctx is canceled, since the write it follows is committed.
func (s *Store[T]) dropBlobs(ctx context.Context, refs []Ref, keep *store.Entity) {
	var names []string
	for _, r := range refs {
		if keep == nil || !s.references(keep, r.Blob) {
			names = append(names, r.Blob)
		}
	}
	s.deleteBlobs(context.WithoutCancel(ctx), names)
}

// deleteBlobs deletes blobs by name, ignoring failures.
func (s *Store[T]) deleteBlobs(ctx context.Context, names []string) {
	s.each(ctx, len(names), func(ctx context.Context, i int) error {
		return s.container.DeleteBlob(ctx, names[i], "")
	})
}
