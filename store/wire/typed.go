package wire

import (
	"encoding/base64"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
)

// BodyWriter is a store.PropertyWriter that appends each property to Buf
// in the format AppendProperty writes, annotation included: the body of a
// typed write. Open the object with AppendEntityStart first and close it
// with AppendEntityEnd after the properties.
type BodyWriter struct {
	Buf []byte
}

// name appends ,"name": for a checked name, which needs no escaping
// (letters, digits and '_' only).
func (w *BodyWriter) name(n store.PropertyName) {
	w.Buf = append(w.Buf, ',', '"')
	w.Buf = append(w.Buf, n.String()...)
	w.Buf = append(w.Buf, '"', ':')
}

// annotated appends ,"name@odata.type":"typ","name":
func (w *BodyWriter) annotated(n store.PropertyName, typ string) {
	w.Buf = append(w.Buf, ',', '"')
	w.Buf = append(w.Buf, n.String()...)
	w.Buf = append(w.Buf, `@odata.type":"`...)
	w.Buf = append(w.Buf, typ...)
	w.Buf = append(w.Buf, '"')
	w.name(n)
}

// String implements store.PropertyWriter.
func (w *BodyWriter) String(n store.PropertyName, v string) error {
	w.name(n)
	w.Buf = AppendString(w.Buf, v)
	return nil
}

// Binary implements store.PropertyWriter.
func (w *BodyWriter) Binary(n store.PropertyName, v []byte) error {
	w.annotated(n, string(store.EdmBinary))
	w.Buf = append(base64.StdEncoding.AppendEncode(append(w.Buf, '"'), v), '"')
	return nil
}

// Bool implements store.PropertyWriter.
func (w *BodyWriter) Bool(n store.PropertyName, v bool) error {
	w.name(n)
	w.Buf = strconv.AppendBool(w.Buf, v)
	return nil
}

// Int32 implements store.PropertyWriter.
func (w *BodyWriter) Int32(n store.PropertyName, v int32) error {
	w.name(n)
	w.Buf = strconv.AppendInt(w.Buf, int64(v), 10)
	return nil
}

// Int64 implements store.PropertyWriter.
func (w *BodyWriter) Int64(n store.PropertyName, v int64) error {
	w.annotated(n, string(store.EdmInt64))
	w.Buf = append(strconv.AppendInt(append(w.Buf, '"'), v, 10), '"')
	return nil
}

// Double implements store.PropertyWriter.
func (w *BodyWriter) Double(n store.PropertyName, v float64) error {
	w.annotated(n, string(store.EdmDouble))
	w.Buf = AppendDouble(w.Buf, v)
	return nil
}

// Time implements store.PropertyWriter.
func (w *BodyWriter) Time(n store.PropertyName, v time.Time) error {
	w.annotated(n, string(store.EdmDateTime))
	w.Buf = append(AppendTime(append(w.Buf, '"'), v), '"')
	return nil
}

// GUID implements store.PropertyWriter.
func (w *BodyWriter) GUID(n store.PropertyName, v store.GUID) error {
	w.annotated(n, string(store.EdmGuid))
	w.Buf = append(AppendGUID(append(w.Buf, '"'), v), '"')
	return nil
}

var bodyWriters = sync.Pool{New: func() any { return new(BodyWriter) }}

// AppendSource appends the entity with keys pk and rk whose properties src
// writes, as AppendEntity appends an Entity, checking every rule on the
// way (store.WriteSource; inBatch as there). It returns dst extended and
// the entity's estimated wire size.
func AppendSource(dst []byte, pk, rk string, src store.PropertySource, inBatch bool) ([]byte, error) {
	w := bodyWriters.Get().(*BodyWriter)
	w.Buf = AppendEntityStart(dst, pk, rk)
	_, err := store.WriteSource(pk, rk, src, inBatch, w)
	out := AppendEntityEnd(w.Buf)
	w.Buf = nil
	bodyWriters.Put(w)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// ReadEntity reads one entity object (as DecodeEntity does) and hands its
// members to r: keys, Timestamp and ETag (from odata.etag) and every
// custom property with its type, in wire order. Names handed to r alias
// data. An error of r is returned as it is; a body that cannot be read is
// a *MalformedError.
func ReadEntity(data []byte, r store.EntityReader) error {
	var rerr error
	err := Scan(data, func(p Property) error {
		rerr = readMember(p, r)
		return rerr
	})
	if err == nil || isMalformed(err) || err == rerr {
		return err // nil, a bad value, or r's own error
	}
	return &MalformedError{Err: err} // the JSON itself
}

// ReadProperty hands one member Scan delivered to r, as ReadEntity does:
// a key, the Timestamp, the ETag (odata.etag) or a custom property, with
// the method of its type. A caller that must look at an entity before
// reading it (a query that checks each entity against its filter) scans
// it once, keeps the Property values, and hands over the ones it wants.
// An error of r is returned as it is; a value that does not match its
// type is a *MalformedError.
func ReadProperty(p Property, r store.EntityReader) error { return readMember(p, r) }

// MalformedError reports an entity body ReadEntity could not read: bad
// JSON, or a value that does not match its type.
type MalformedError struct {
	Err error
}

// Error returns the cause's text.
func (e *MalformedError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *MalformedError) Unwrap() error { return e.Err }

func isMalformed(err error) bool {
	_, ok := err.(*MalformedError)
	return ok
}

func malformed(err error) error { return &MalformedError{Err: err} }

// readMember hands one scanned member to r.
func readMember(p Property, r store.EntityReader) error {
	name := unsafeString(p.Name)
	switch name {
	case "PartitionKey":
		s, err := p.AsString()
		if err != nil {
			return malformed(err)
		}
		return r.SetPartitionKey(s)
	case "RowKey":
		s, err := p.AsString()
		if err != nil {
			return malformed(err)
		}
		return r.SetRowKey(s)
	case "Timestamp":
		t, err := p.AsTime()
		if err != nil {
			return malformed(err)
		}
		return r.SetTimestamp(t)
	case "odata.etag":
		s, err := p.AsString()
		if err != nil {
			return malformed(err)
		}
		return r.SetETag(store.ETag(s))
	}
	return readProperty(name, p, r)
}

// errUnsupported reports a type the reader cannot take.
var errUnsupported = &MalformedError{Err: errors.New("wire: unsupported property type")}

func readProperty(name string, p Property, r store.EntityReader) error {
	switch p.Type {
	case store.EdmString:
		s, err := p.AsString()
		if err != nil {
			return malformed(err)
		}
		return r.SetString(name, s)
	case store.EdmBoolean:
		b, err := p.AsBool()
		if err != nil {
			return malformed(err)
		}
		return r.SetBool(name, b)
	case store.EdmInt32:
		n, err := p.AsInt32()
		if err != nil {
			return malformed(err)
		}
		return r.SetInt32(name, n)
	case store.EdmInt64:
		n, err := p.AsInt64()
		if err != nil {
			return malformed(err)
		}
		return r.SetInt64(name, n)
	case store.EdmDouble:
		x, err := p.AsDouble()
		if err != nil {
			return malformed(err)
		}
		return r.SetDouble(name, x)
	case store.EdmDateTime:
		t, err := p.AsTime()
		if err != nil {
			return malformed(err)
		}
		return r.SetTime(name, t)
	case store.EdmGuid:
		g, err := p.AsGUID()
		if err != nil {
			return malformed(err)
		}
		return r.SetGUID(name, g)
	case store.EdmBinary:
		b, err := p.AsBinary()
		if err != nil {
			return malformed(err)
		}
		return r.SetBinary(name, b)
	}
	return errUnsupported
}
