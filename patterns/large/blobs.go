package large

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablekit/tablekit/store"
)

// fresh tracks the blobs of one logical write.
type fresh[T any] struct {
	s       *Store[T]
	p       *plan
	written bool      // they exist, or may
	at      time.Time // when their puts began
	keep    bool      // the entity references them, or may: never delete them
}

// ensure makes the blobs exist, written under their names no more than
// Grace/2 ago: a sweep removes only blobs older than Grace, so the
// entity write that follows cannot reference a blob a sweep removed.
// Blobs written earlier than that are removed and written again under
// new names.
func (f *fresh[T]) ensure(ctx context.Context) error {
	s := f.s
	if len(f.p.blobs) == 0 {
		return nil
	}
	if f.written && s.o.Now().Sub(f.at) <= s.o.Grace/2 {
		return nil
	}
	if f.written {
		f.drop(ctx)
		if err := s.renew(f.p); err != nil {
			return err
		}
	}
	f.at = s.o.Now()
	f.written = true
	errs := s.each(ctx, len(f.p.blobs), func(ctx context.Context, i int) error {
		return s.putBlob(ctx, f.p, f.p.blobs[i])
	})
	if err := firstErr(errs); err != nil {
		return err
	}
	if took := s.o.Now().Sub(f.at); took > s.o.Grace/2 {
		return fmt.Errorf("large: write %s: writing its blobs took %s, more than half the grace period (%s): the write is abandoned so that no sweep can remove a blob it references",
			entityName(s.tableName, f.p.entity.PartitionKey, f.p.entity.RowKey), took, s.o.Grace)
	}
	return nil
}

// drop deletes the blobs unless the entity may reference them.
func (f *fresh[T]) drop(ctx context.Context) {
	if !f.written || f.keep {
		return
	}
	names := make([]string, len(f.p.blobs))
	for i, b := range f.p.blobs {
		names[i] = b.ref.Blob
	}
	f.s.deleteBlobs(context.WithoutCancel(ctx), names)
	f.written = false
}

// abandon runs when a write returns: the blobs of a write that did not
// commit are removed, unless the entity may reference them.
func (f *fresh[T]) abandon(ctx context.Context) { f.drop(ctx) }

// putBlob writes one fresh blob with If-None-Match *, so it never
// overwrites a blob. A put whose answer is lost is sent again: the name
// is this write's own, so BlobAlreadyExists then means the first send
// landed.
func (s *Store[T]) putBlob(ctx context.Context, p *plan, b *blobValue) error {
	mayExist := false
	var err error
	for range 3 {
		_, err = s.container.Put(ctx, b.ref.Blob, b.body, &store.BlobPutOptions{IfNoneMatchAny: true})
		if err == nil || (mayExist && store.Code(err) == store.CodeBlobAlreadyExists) {
			return nil
		}
		if errors.Is(err, store.ErrUnknownOutcome) {
			mayExist = true
			continue
		}
		if !errors.Is(err, store.ErrTransient) {
			break
		}
	}
	hint := ""
	if store.Code(err) == store.CodeContainerNotFound {
		hint = " (create it with Store.Create)"
	}
	return fmt.Errorf("large: write %s: store property %s in blob %s of container %s%s: %w",
		entityName(s.tableName, p.entity.PartitionKey, p.entity.RowKey), b.prop, quote(b.ref.Blob), s.container.Name(), hint, err)
}
