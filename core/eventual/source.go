package eventual

import (
	"context"

	"github.com/tablekit/tablekit/store"
)

// VersionOf reads the version the engine keeps on a row it wrote
// (VersionProperty): a source row's after Write, a copy's after a step.
// A row without one, or with one that is not an integer, has version 0.
// Step handlers (Handle) compare it with Operation.Version.
func VersionOf(e *store.Entity) int64 {
	if e == nil {
		return 0
	}
	switch v := e.Properties[VersionProperty].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	}
	return 0
}

// MovedPast reports whether the source row r names has moved past
// version v: it is gone, or it carries a newer version (VersionOf). A
// step of an operation at version v must then not create a copy that is
// missing, since a later operation carries the source's state or its
// deletion. It reads the row as store.RowRef.Read does (r.Read), with its
// errors.
func MovedPast(ctx context.Context, st store.Store, r Ref, v int64) (bool, error) {
	row, found, err := r.Read(ctx, st)
	if err != nil {
		return false, err
	}
	return !found || VersionOf(&row) > v, nil
}
