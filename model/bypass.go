package model

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
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
		if v == nil || store.ReservedProperty(k) || slices.Contains(skip, k) {
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

// stampCopy sets SumProperty on the properties of a copy in the entity's
// partition about to be written: the digest of the entity's own
// properties it carries, as on the entity row.
func (m *Model[T]) stampCopy(props map[string]any) {
	props[SumProperty] = m.sumOf(own(props))
}

// copyOf returns the entity a copy c of index f in partition pk holds, as
// of the model write that wrote both in one transaction, without reading
// the entity: a *BypassError when c was not written by the model as it
// stands (no version, no digest, properties that do not give it, or a
// value that does not give its RowKey).
func (m *Model[T]) copyOf(pk string, f *Feature[T], c *store.Entity) (*T, error) {
	id, err := m.copyStamp(pk, c)
	if err != nil {
		return nil, err
	}
	v, err := decodeProps[T](pk, id, own(c.Properties), "")
	if err != nil {
		return nil, err
	}
	if val := f.value(v); val != "" {
		if k, err := localKey(f, val, id); err == nil && k == c.RowKey {
			return v, nil
		}
	}
	return nil, &BypassError{Table: m.table, PartitionKey: pk, RowKey: c.RowKey,
		Reason: fmt.Sprintf("the copy of entity %q does not hold the value its key names", id)}
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
