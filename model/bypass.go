package model

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// SumProperty holds, on every entity row the model writes, a digest of
// the entity's properties as written (its encrypted properties left out:
// a digest of them would let a reader of the table confirm a guess of
// their plaintext). A row without it, or whose properties no longer give
// it, was written without the model.
const SumProperty = "TkSum"

// ErrBypassed matches the error of a read or write that meets a row of
// the model's written without it: an entity row replaced, merged or
// inserted directly (through store.Table or a mapper repository), or an
// entity deleted directly while its copies stay. The model refuses to
// read or write such an entity until Repair adopts it (or the row is
// put back); Check lists it.
var ErrBypassed = errors.New("model: a row was written without the model")

// BypassError is the error of a read or write that met a row written
// without the model. It matches ErrBypassed.
type BypassError struct {
	// Table, PartitionKey and RowKey name the row found wrong: the
	// entity's row, or the copy that names an entity that is not there.
	Table, PartitionKey, RowKey string
	// Reason says what was found.
	Reason string
}

func (e *BypassError) Error() string {
	return fmt.Sprintf("model: row (%q, %q) of %s was written without the model: %s (Model.Check lists such rows, Model.Repair mends them)",
		e.PartitionKey, e.RowKey, e.Table, e.Reason)
}

// Is reports whether target is ErrBypassed.
func (e *BypassError) Is(target error) bool { return target == ErrBypassed }

// digest is a digest of the properties of props that are not the
// model's (Tk...), not nil and not skipped, in a form every backend
// reads back alike (a time in UTC at 100 ns, a double normalised).
func digest(props map[string]any, skip []string) string {
	names := make([]string, 0, len(props))
	for k, v := range props {
		if v == nil || strings.HasPrefix(k, "Tk") || slices.Contains(skip, k) {
			continue
		}
		names = append(names, k)
	}
	slices.Sort(names)
	h := sha256.New()
	var b []byte
	str := func(s string) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, k := range names {
		b = b[:0]
		str(k)
		switch x := props[k].(type) {
		case string:
			b = append(b, 's')
			str(x)
		case []byte:
			b = append(b, 'b')
			str(string(x))
		case bool:
			b = append(b, 'B')
			if x {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case int32:
			b = append(b, '4')
			b = binary.BigEndian.AppendUint64(b, uint64(int64(x)))
		case int64:
			b = append(b, '8')
			b = binary.BigEndian.AppendUint64(b, uint64(x))
		case float64:
			b = append(b, 'd')
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(store.NormalizeDouble(x)))
		case time.Time:
			t := store.NormalizeTime(x)
			b = append(b, 't')
			b = binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
			b = binary.BigEndian.AppendUint64(b, uint64(t.Nanosecond()))
		case store.GUID:
			b = append(b, 'g')
			b = append(b, x[:]...)
		default:
			b = append(b, '?')
			str(fmt.Sprintf("%T %v", x, x))
		}
		h.Write(b)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:18])
}

// sumOf is the SumProperty of an entity whose own properties are props.
func (m *Model[T]) sumOf(props map[string]any) string {
	enc, _ := mapper.EncryptedProperties[T]() // Define checked the type
	return digest(props, enc)
}

// stampSum sets SumProperty on the properties of an entity row about to
// be written.
func (m *Model[T]) stampSum(props map[string]any) {
	props[SumProperty] = m.sumOf(props)
}

// intact reports (as a *BypassError) an entity row the model did not
// write as it stands: no version, no digest, or properties that do not
// give its digest. A marker or a reservation of a move is the model's.
func (m *Model[T]) intact(row *store.Entity) error {
	if moving(row) {
		return nil
	}
	reason := ""
	s, _ := row.Properties[SumProperty].(string)
	switch {
	case eventual.VersionOf(row) <= 0:
		reason = "the entity row carries no version"
	case s == "":
		reason = "the entity row carries no " + SumProperty
	case s != m.sumOf(own(row.Properties)):
		reason = "the entity's properties changed since the model wrote them"
	default:
		return nil
	}
	return &BypassError{Table: m.table, PartitionKey: row.PartitionKey, RowKey: row.RowKey, Reason: reason}
}

// throughCopy reads the entity a copy c of index f in partition pk names
// and returns it, as stored now with its ETag, when it is intact and
// still holds the copy's value: found false when it no longer does
// because a model write moved it on since c was read, a *BypassError when
// c and its entity disagree with nothing having changed (the entity was
// deleted or changed without the model, or c was written without it).
func (m *Model[T]) throughCopy(ctx context.Context, pk string, f *Feature[T], c store.Entity) (*T, bool, error) {
	tbl := m.st.Table(m.table)
	for range maxRounds {
		id, _ := c.Properties[IDProperty].(string)
		ek, err := entityKey(id)
		if err != nil {
			return nil, false, &BypassError{Table: m.table, PartitionKey: pk, RowKey: c.RowKey, Reason: fmt.Sprintf("the copy names no entity (id %q)", id)}
		}
		row, err := tbl.Get(ctx, pk, ek, nil)
		reason := ""
		switch {
		case store.EntityNotFound(err):
			reason = fmt.Sprintf("the copy names entity %q, which does not exist", id)
		case err != nil:
			return nil, false, err
		case moving(&row):
			return nil, false, nil // in flight: found in neither partition
		default:
			if err := m.intact(&row); err != nil {
				return nil, false, err
			}
			v, err := decodeProps[T](pk, id, own(row.Properties), row.ETag)
			if err != nil {
				return nil, false, err
			}
			if val := f.value(v); val != "" {
				if k, err := localKey(f, val, id); err == nil && k == c.RowKey {
					return v, true, nil
				}
			}
			reason = fmt.Sprintf("the copy names entity %q, which does not hold its value", id)
		}
		// A model write changes the copy in the same transaction as its
		// entity: read the copy again to tell one from drift.
		again, err := tbl.Get(ctx, pk, c.RowKey, nil)
		if store.EntityNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		if again.ETag == c.ETag {
			return nil, false, &BypassError{Table: m.table, PartitionKey: pk, RowKey: c.RowKey, Reason: reason}
		}
		c = again
	}
	return nil, false, errContended
}
