package large

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// Delete removes the entity of *v if it still has the ETag in v's etag
// field, then its blobs. A stale ETag is an error matching
// store.ErrPreconditionFailed; a value without an ETag is
// mapper.ErrNoETag; a missing entity matches store.ErrNotFound. Cost: one
// point read (the blobs the version holds), one delete, one blob delete
// per blob.
func (s *Store[T]) Delete(ctx context.Context, v *T) error {
	if v == nil {
		var zero T
		return refuse("nil *%T", zero)
	}
	e, err := mapper.EncodeLarge(v) // for its keys
	if err != nil {
		return err
	}
	etag := mapper.ETagOf(v)
	if etag == "" {
		return fmt.Errorf("large: delete %s: %w", entityName(s.tableName, e.PartitionKey, e.RowKey), mapper.ErrNoETag)
	}
	return s.del(ctx, e.PartitionKey, e.RowKey, etag)
}

// DeleteKey removes the entity (pk, rk) whatever its version, then its
// blobs. Each try is conditional on the version it read, so the blobs
// removed are exactly those of the version deleted.
func (s *Store[T]) DeleteKey(ctx context.Context, pk, rk string) error {
	if err := store.ValidateKeys(pk, rk); err != nil {
		return fmt.Errorf("large: delete %s: %w", entityName(s.tableName, pk, rk), err)
	}
	return s.del(ctx, pk, rk, "")
}

func (s *Store[T]) del(ctx context.Context, pk, rk string, want store.ETag) error {
	name := entityName(s.tableName, pk, rk)
	var last error
	for try := 0; ; try++ {
		if try > 0 {
			if try >= s.o.Attempts {
				return fmt.Errorf("large: delete %s: %d tries lost to concurrent writers or faults: %w (last: %w)", name, try, ErrContention, last)
			}
			if err := s.backoff(ctx, try); err != nil {
				return err
			}
		}
		cur, err := s.current(ctx, pk, rk)
		if err != nil {
			if errors.Is(err, store.ErrTransient) {
				last = err
				continue
			}
			return err
		}
		if !cur.exists {
			return store.Errorf(store.CodeResourceNotFound, 404, "large: delete %s: the entity does not exist", name)
		}
		if want != "" && cur.entity.ETag != want {
			return store.Errorf(store.CodeUpdateConditionNotSatisfied, 412,
				"large: delete %s: the entity has changed since it was read (ETag %s, not %s)", name, cur.entity.ETag, want)
		}
		err = s.table.Delete(ctx, pk, rk, cur.entity.ETag)
		if err == nil {
			s.dropBlobs(ctx, s.refsOf(&cur.entity), nil)
			return nil
		}
		switch {
		case errors.Is(err, store.ErrUnknownOutcome):
			e, rerr := s.readBack(ctx, pk, rk, s.selLarge)
			switch {
			case store.EntityNotFound(rerr):
				// Deleted: by this request or by another writer, who
				// removes the same blobs; removing them twice is harmless.
				s.dropBlobs(ctx, s.refsOf(&cur.entity), nil)
				return nil
			case rerr != nil:
				return fmt.Errorf("large: delete %s: %w; the read-back failed (%v)", name, err, rerr)
			case e.ETag == cur.entity.ETag:
				last = resolved("large: delete "+name, err)
				continue
			}
			// Another version is stored: written after this delete, or
			// instead of it. The blobs of the version read are not its
			// (it references only blobs its own writer made), unless it
			// kept them; those it does not reference are removed.
			s.dropBlobs(ctx, s.refsOf(&cur.entity), &e)
			return fmt.Errorf("large: delete %s: %w; a read-back could not tell whether it was applied (the entity changed since)", name, err)
		case errors.Is(err, store.ErrTransient):
			last = fmt.Errorf("large: delete %s: %w", name, err)
			continue
		case want == "" && (errors.Is(err, store.ErrPreconditionFailed) || store.EntityNotFound(err)):
			last = fmt.Errorf("large: delete %s: %w", name, err)
			continue
		}
		return fmt.Errorf("large: delete %s: %w", name, err)
	}
}
