package large

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// readTries bounds the reads of one Get that finds a blob removed by a
// concurrent writer (which replaced the entity after it was read).
const readTries = 5

// Get reads the entity (pk, rk) and the blobs of all its large values,
// in parallel. A missing entity is an error matching store.ErrNotFound; a
// blob the entity references that does not exist is a *BlobError
// matching ErrMissingBlob. Cost: one point read and one blob read per
// value in a blob.
func (s *Store[T]) Get(ctx context.Context, pk, rk string) (T, error) {
	return s.get(ctx, pk, rk, nil, nil)
}

// GetFields reads only the named properties of the entity (pk, rk), and
// the blobs of only those of them that are large: the others keep their
// zero values; the keys, the ETag and the Timestamp are always set. With
// no names it reads no property at all. An unknown name is refused.
// Cost: one point read (with $select) and one blob read per named value
// in a blob.
func (s *Store[T]) GetFields(ctx context.Context, pk, rk string, props ...string) (T, error) {
	var zero T
	sel := make([]string, 0, len(props)+1)
	for _, p := range props {
		if !s.props[p] {
			return zero, refuse("GetFields: %T has no property %q", zero, p)
		}
		if !slices.Contains(sel, p) {
			sel = append(sel, p)
		}
	}
	if s.kindProp != "" && !slices.Contains(sel, s.kindProp) {
		sel = append(sel, s.kindProp) // the decode checks the kind
	}
	want := make(map[string]bool, len(sel))
	for _, p := range sel {
		want[p] = true
	}
	if len(sel) == 0 {
		// $select of nothing would mean everything: ask for a large
		// property and drop it.
		sel = []string{s.large[0].Property}
	}
	return s.get(ctx, pk, rk, sel, want)
}

// get reads the entity with $select sel, resolves the references of the
// large properties in want (all when want is nil) and decodes.
func (s *Store[T]) get(ctx context.Context, pk, rk string, sel []string, want map[string]bool) (T, error) {
	var v T
	var opts *store.GetOptions
	if sel != nil {
		opts = &store.GetOptions{Select: sel}
	}
	var last error
	for range readTries {
		e, err := s.table.Get(ctx, pk, rk, opts)
		if err != nil {
			return v, err
		}
		if want != nil {
			for k := range e.Properties {
				if !want[k] {
					delete(e.Properties, k)
				}
			}
		}
		err = s.resolve(ctx, &e)
		if err == nil {
			err = mapper.Decode(e, &v)
			return v, err
		}
		if !errors.Is(err, ErrMissingBlob) {
			return v, err
		}
		// A writer that replaced the entity since it was read removes
		// the blobs of the version read: read the version again.
		now, nerr := s.table.Get(ctx, pk, rk, &store.GetOptions{Select: s.selLarge})
		switch {
		case nerr != nil:
			return v, nerr
		case now.ETag == e.ETag:
			return v, err // the same version: the blob is truly missing
		}
		last = err
	}
	return v, fmt.Errorf("large: read %s: it changed under %d reads in a row: %w", entityName(s.tableName, pk, rk), readTries, last)
}

// resolve replaces the references in e's large properties with the
// values from their blobs, read in parallel.
func (s *Store[T]) resolve(ctx context.Context, e *store.Entity) error {
	type job struct {
		lf  *mapper.LargeField
		ref Ref
	}
	var jobs []job
	for i := range s.large {
		lf := &s.large[i]
		x, ok := e.Properties[lf.Property]
		if !ok {
			continue
		}
		r, isRef, err := refOf(x, lf.Type)
		if err != nil {
			return s.blobErr(e, lf.Property, "", ErrCorruptBlob, fmt.Errorf("it holds an %s value: %w", typeName(x), err))
		}
		if isRef {
			jobs = append(jobs, job{lf, r})
		}
	}
	vals := make([]any, len(jobs))
	errs := s.each(ctx, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		body, _, err := s.container.Get(ctx, j.ref.Blob)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return s.blobErr(e, j.lf.Property, j.ref.Blob, ErrMissingBlob, err)
			}
			return fmt.Errorf("large: read %s: property %s: blob %s of container %s: %w",
				entityName(s.tableName, e.PartitionKey, e.RowKey), j.lf.Property, quote(j.ref.Blob), s.container.Name(), err)
		}
		data, err := decode(body, j.ref)
		if err != nil {
			return s.blobErr(e, j.lf.Property, j.ref.Blob, ErrCorruptBlob, err)
		}
		if j.lf.Type == store.EdmBinary {
			vals[i] = data
		} else {
			vals[i] = string(data)
		}
		return nil
	})
	if err := pickErr(errs); err != nil {
		return err
	}
	for i, j := range jobs {
		e.Properties[j.lf.Property] = vals[i]
	}
	return nil
}

// pickErr returns a missing-blob error first (the caller reads again on
// it), else the first error.
func pickErr(errs []error) error {
	for _, err := range errs {
		if errors.Is(err, ErrMissingBlob) {
			return err
		}
	}
	return firstErr(errs)
}

func (s *Store[T]) blobErr(e *store.Entity, prop, blob string, kind, cause error) *BlobError {
	return &BlobError{Table: s.tableName, PartitionKey: e.PartitionKey, RowKey: e.RowKey, Property: prop,
		Blob: blob, Container: s.container.Name(), Err: cause, kind: kind}
}

func typeName(x any) string {
	t, err := store.TypeOf(x)
	if err != nil {
		return fmt.Sprintf("%T", x)
	}
	return string(t)
}
