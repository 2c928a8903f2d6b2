package store

import (
	"context"
	"math"
	"sync"
	"time"
	"unicode/utf8"
)

// The typed path. A caller that holds an entity as a Go value (the
// mapper's structs) need not build a map[string]any for every write and
// read: it hands the backend a PropertySource, which writes its properties
// one by one into the backend's own form (a JSON request body on Azure, a
// packed record in memstore), and reads through an EntityReader, which the
// backend feeds straight from the service's answer (one entity of a point
// read, or each entity of a query page: QueryInto). Entity stays the
// currency of the Table interface; TypedTable is the optional fast lane,
// and every rule of the service is enforced on it by the same code as on
// Entity values: a backend writes a source only through WriteSource, which
// checks keys, names, values, count and size as the properties pass.

// PropertyName is a custom property name that ValidatePropertyName
// accepted, with the lengths the rules and the wire need. Only
// NewPropertyName makes one, so a PropertyWriter never sees an unchecked
// name; callers make their names once and keep them.
type PropertyName struct {
	s     string
	units int // UTF-16 code units
	json  int // bytes as a JSON string, quotes included
	// ignored marks TimestampProperty: written, it is accepted and
	// dropped (WriteSource passes it on to no writer).
	ignored bool
}

// NewPropertyName checks name with ValidatePropertyName and returns it as
// a PropertyName. It also accepts TimestampProperty, which the service
// accepts in a write and ignores: a source may write it, and WriteSource
// drops it (it reaches no backend's writer and counts toward no limit).
func NewPropertyName(name string) (PropertyName, error) {
	if IgnoredOnWrite(name) {
		return PropertyName{s: name, units: utf16Len(name), json: jsonStringLen(name), ignored: true}, nil
	}
	if err := ValidatePropertyName(name); err != nil {
		return PropertyName{}, err
	}
	return PropertyName{s: name, units: utf16Len(name), json: jsonStringLen(name)}, nil
}

// String returns the name.
func (n PropertyName) String() string { return n.s }

// PropertyWriter receives the custom properties of one entity, each with
// its type. Backends implement it for their own form of an entity; a
// PropertySource calls it.
type PropertyWriter interface {
	String(n PropertyName, v string) error
	Binary(n PropertyName, v []byte) error
	Bool(n PropertyName, v bool) error
	Int32(n PropertyName, v int32) error
	Int64(n PropertyName, v int64) error
	Double(n PropertyName, v float64) error
	Time(n PropertyName, v time.Time) error
	GUID(n PropertyName, v GUID) error
}

// WriteValue writes v, a value of the closed set TypeOf accepts, with the
// method of its type; a nil v writes nothing (it is not stored). Any other
// type is refused with InvalidValueType.
func WriteValue(w PropertyWriter, n PropertyName, v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return w.String(n, x)
	case []byte:
		return w.Binary(n, x)
	case bool:
		return w.Bool(n, x)
	case int32:
		return w.Int32(n, x)
	case int64:
		return w.Int64(n, x)
	case float64:
		return w.Double(n, x)
	case time.Time:
		return w.Time(n, x)
	case GUID:
		return w.GUID(n, x)
	}
	return ValidateValue(n.s, v)
}

// PropertySource is an entity's custom properties held in a form of the
// caller's own (a mapped struct). WriteProperties writes every stored
// property to w in strictly ascending name order (byte order), each at most
// once, and returns the first error w or the value itself reports. It may
// be called more than once and must write the same properties each time.
type PropertySource interface {
	WriteProperties(w PropertyWriter) error
}

// TypedTable is implemented by a backend's Table that takes writes from a
// PropertySource and reads into an EntityReader without a map[string]any
// in between. Its Transact accepts actions whose Source is set. memstore
// and azstore implement it; the mapper uses it when the table has it
// (store/driver's Typed is the one probe) and falls back to Entity values
// otherwise.
type TypedTable interface {
	Table
	// Write applies one write outside a transaction, as Insert, Update,
	// Upsert or Delete would: a.Kind chooses which, a.IfMatch is the
	// condition of an update or delete, and the properties come from
	// a.Source when it is set (a.Entity.Properties must then be nil).
	Write(ctx context.Context, a Action) (ETag, error)
	// GetInto reads one entity, as Get does, and hands its members to r;
	// nothing is handed to r when the read fails.
	GetInto(ctx context.Context, pk, rk string, opts *GetOptions, r EntityReader) error
	// QueryInto reads one page of q, the page Query would return, and
	// hands its entities in key order to readers without building Entity
	// values: for each entity it calls next once and hands the entity's
	// members to the reader next returned (the keys, Timestamp and ETag,
	// then the stored properties, only the selected ones under
	// q.Select). The request is checked by the code that checks Query's
	// (filter.ParseQuery, the continuation token's seal), the filter has
	// Query's semantics, and the continuation token it returns ("" on the
	// last page) is the one Query would return. n is the number of
	// entities handed over. A reader's error stops the page and is
	// returned as it is; on any error n is 0 and the entities already
	// handed over belong to no page: discard them.
	QueryInto(ctx context.Context, q Query, next func() EntityReader) (continuation string, n int, err error)
}

// EntityReader receives the members of one entity as a backend reads it,
// in the backend's order: the keys, Timestamp and ETag when known, and each
// stored custom property with its type. A name is valid only during the
// call (copy it to keep it); a []byte value belongs to the reader. The
// first error stops the read and is returned by the backend.
type EntityReader interface {
	SetPartitionKey(pk string) error
	SetRowKey(rk string) error
	SetTimestamp(t time.Time) error
	SetETag(etag ETag) error
	SetString(name, v string) error
	SetBinary(name string, v []byte) error
	SetBool(name string, v bool) error
	SetInt32(name string, v int32) error
	SetInt64(name string, v int64) error
	SetDouble(name string, v float64) error
	SetTime(name string, v time.Time) error
	SetGUID(name string, v GUID) error
}

// ReadValue hands v, a value of the closed set, to r with the method of
// its type; a nil v is skipped.
func ReadValue(r EntityReader, name string, v any) error {
	switch x := v.(type) {
	case string:
		return r.SetString(name, x)
	case []byte:
		return r.SetBinary(name, x)
	case bool:
		return r.SetBool(name, x)
	case int32:
		return r.SetInt32(name, x)
	case int64:
		return r.SetInt64(name, x)
	case float64:
		return r.SetDouble(name, x)
	case time.Time:
		return r.SetTime(name, x)
	case GUID:
		return r.SetGUID(name, x)
	}
	return nil
}

// WriteSource writes the properties of src, for the entity with keys pk
// and rk, to w (nil to check only), enforcing the rules ValidateEntity
// enforces on an Entity: the keys, each value's type limits, at most
// MaxCustomProperties properties and MaxEntitySize bytes by the service's
// formula, and the ascending order that keeps each name once. inBatch
// selects the codes the service uses inside a transaction. With a nil w
// (a check only) it returns the estimated wire size of the entity (see
// EstimateWireSize); a writer knows the real size, and wire is then 0.
// Backends write every PropertySource through it, so no rule is skipped on
// the typed path.
func WriteSource(pk, rk string, src PropertySource, inBatch bool, w PropertyWriter) (wire int, err error) {
	return writeSource(pk, rk, src, inBatch, w, w == nil)
}

// WriteSourceSized is WriteSource that also returns the estimated wire
// size of the entity when it writes to w: for a backend whose own form of
// an entity is not the request body (memstore packs records) and that
// still bounds a transaction's body as the service does (ActionFraming,
// CheckTransactionBytes).
func WriteSourceSized(pk, rk string, src PropertySource, inBatch bool, w PropertyWriter) (wire int, err error) {
	return writeSource(pk, rk, src, inBatch, w, true)
}

func writeSource(pk, rk string, src PropertySource, inBatch bool, w PropertyWriter, estimate bool) (wire int, err error) {
	if err := validateKey("PartitionKey", pk, inBatch); err != nil {
		return 0, err
	}
	if err := validateKey("RowKey", rk, inBatch); err != nil {
		return 0, err
	}
	c := checkers.Get().(*checker)
	*c = checker{w: w, pk: pk, rk: rk, size: 4 + 2*(utf16Len(pk)+utf16Len(rk)), estimate: estimate}
	if estimate {
		c.wire = 64 + jsonStringLen(pk) + jsonStringLen(rk)
	}
	err = src.WriteProperties(c)
	if err == nil {
		err = c.err
	}
	if err == nil {
		err = c.finish()
	}
	wire = c.wire
	*c = checker{}
	checkers.Put(c)
	return wire, err
}

var checkers = sync.Pool{New: func() any { return new(checker) }}

// checker is the PropertyWriter WriteSource hands a source: it checks
// each property with the rules and forwards it to the backend's writer.
type checker struct {
	w      PropertyWriter
	pk, rk string
	// estimate adds up the entity's estimated wire size (always without
	// a writer, which would know the real one).
	estimate bool
	last     string
	count    int
	size     int
	wire     int
	err      error // the first refusal, kept in case the source ignores it
}

// name checks the order and counts the property; extra is its value's
// share of the size formula and wire is its share of the body.
func (c *checker) name(n PropertyName, extra, wire int) error {
	if c.err != nil {
		return c.err
	}
	if n.s == "" {
		return c.fail(refuse(CodePropertyNameInvalid, 400, "property name is empty: make names with store.NewPropertyName"))
	}
	if c.last != "" && n.s <= c.last {
		return c.fail(invalid("entity (%s, %s): property %q comes after %q: a PropertySource writes each property once, in ascending name order",
			quoteTrunc(c.pk), quoteTrunc(c.rk), n.s, c.last))
	}
	c.last = n.s
	c.count++
	c.size += 8 + 2*n.units + extra
	if c.estimate {
		c.wire += n.json + 2 + wire
	}
	return nil
}

// skip takes a property the service ignores (TimestampProperty): its
// place in the name order is checked, and nothing else is done with it.
func (c *checker) skip(n PropertyName) error {
	if c.err != nil {
		return c.err
	}
	if c.last != "" && n.s <= c.last {
		return c.fail(invalid("entity (%s, %s): property %q comes after %q: a PropertySource writes each property once, in ascending name order",
			quoteTrunc(c.pk), quoteTrunc(c.rk), n.s, c.last))
	}
	c.last = n.s
	return nil
}

func (c *checker) fail(err error) error {
	if c.err == nil {
		c.err = err
	}
	return c.err
}

// value reports a value's refusal with the entity's keys in the message.
func (c *checker) value(err error) error {
	e := &Entity{PartitionKey: c.pk, RowKey: c.rk}
	return c.fail(inEntity(e, err))
}

func (c *checker) finish() error {
	if c.count > MaxCustomProperties {
		return refuse(CodeTooManyProperties, 400,
			"entity (%s, %s) has %d properties: the limit is %d custom properties", quoteTrunc(c.pk), quoteTrunc(c.rk), c.count, MaxCustomProperties)
	}
	if c.size > MaxEntitySize {
		return refuse(CodeEntityTooLarge, 400,
			"entity (%s, %s) is %d bytes by the service's size formula: the limit is %d", quoteTrunc(c.pk), quoteTrunc(c.rk), c.size, MaxEntitySize)
	}
	return nil
}

func (c *checker) String(n PropertyName, v string) error {
	if n.ignored {
		return c.skip(n)
	}
	units, err := checkString(n.s, v)
	if err != nil {
		return c.value(err)
	}
	wire := 0
	if c.estimate {
		wire = jsonStringLen(v)
	}
	if err := c.name(n, 2*units+4, wire); err != nil || c.w == nil {
		return err
	}
	return c.w.String(n, v)
}

func (c *checker) Binary(n PropertyName, v []byte) error {
	if n.ignored {
		return c.skip(n)
	}
	if err := checkBinary(n.s, len(v)); err != nil {
		return c.value(err)
	}
	if err := c.name(n, len(v)+4, (len(v)+2)/3*4+2+n.json+len(`"@odata.type":"Edm.DateTime",`)); err != nil {
		return err
	}
	if c.w == nil {
		return nil
	}
	return c.w.Binary(n, v)
}

func (c *checker) Bool(n PropertyName, v bool) error {
	if n.ignored {
		return c.skip(n)
	}
	if err := c.name(n, 1, 5); err != nil || c.w == nil {
		return err
	}
	return c.w.Bool(n, v)
}

func (c *checker) Int32(n PropertyName, v int32) error {
	if n.ignored {
		return c.skip(n)
	}
	if err := c.name(n, 4, 11); err != nil || c.w == nil {
		return err
	}
	return c.w.Int32(n, v)
}

func (c *checker) Int64(n PropertyName, v int64) error {
	if n.ignored {
		return c.skip(n)
	}
	if err := c.name(n, 8, 22+annotationWire(n)); err != nil || c.w == nil {
		return err
	}
	return c.w.Int64(n, v)
}

func (c *checker) Double(n PropertyName, v float64) error {
	if n.ignored {
		return c.skip(n)
	}
	w := 24
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w = 11
	}
	if err := c.name(n, 8, w+annotationWire(n)); err != nil || c.w == nil {
		return err
	}
	return c.w.Double(n, v)
}

func (c *checker) Time(n PropertyName, v time.Time) error {
	if n.ignored {
		return c.skip(n)
	}
	if err := checkTime(n.s, v); err != nil {
		return c.value(err)
	}
	if err := c.name(n, 8, 30+annotationWire(n)); err != nil || c.w == nil {
		return err
	}
	return c.w.Time(n, v)
}

func (c *checker) GUID(n PropertyName, v GUID) error {
	if n.ignored {
		return c.skip(n)
	}
	if err := c.name(n, 16, 38+annotationWire(n)); err != nil || c.w == nil {
		return err
	}
	return c.w.GUID(n, v)
}

// annotationWire is annotationLen for a checked name.
func annotationWire(n PropertyName) int { return n.json + len(`"@odata.type":"Edm.DateTime",`) }

// checkString is ValidateValue's rule for a string: valid UTF-8 and at
// most MaxStringUnits UTF-16 units. It returns the units.
func checkString(name, s string) (int, error) {
	n := len(s)
	// ASCII, eight bytes at a time, is valid UTF-8 of one unit a byte.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if (uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56)&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s) && s[i] < utf8.RuneSelf; i++ {
	}
	if i < len(s) {
		if !utf8.ValidString(s[i:]) {
			return 0, invalid("property %q: string value is not valid UTF-8", name)
		}
		n = utf16Len(s)
	}
	if n > MaxStringUnits {
		return n, refuse(CodePropertyValueTooLarge, 400,
			"property %q: string of %d UTF-16 code units exceeds the limit of %d", name, n, MaxStringUnits)
	}
	return n, nil
}

// checkBinary is ValidateValue's rule for a binary value.
func checkBinary(name string, n int) error {
	if n > MaxBinaryBytes {
		return refuse(CodePropertyValueTooLarge, 400,
			"property %q: binary value of %d bytes exceeds the limit of %d", name, n, MaxBinaryBytes)
	}
	return nil
}

// checkTime is ValidateValue's rule for a DateTime.
func checkTime(name string, t time.Time) error {
	u := t.UTC()
	if u.Before(MinTime) || u.After(MaxTime) {
		return refuse(CodeOutOfRangeInput, 400,
			"property %q: DateTime %s is outside the range %s to %s", name,
			u.Format(time.RFC3339Nano), MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339Nano))
	}
	return nil
}

// mapWriter collects properties into a map.
type mapWriter map[string]any

func (m mapWriter) String(n PropertyName, v string) error  { m[n.s] = v; return nil }
func (m mapWriter) Binary(n PropertyName, v []byte) error  { m[n.s] = v; return nil }
func (m mapWriter) Bool(n PropertyName, v bool) error      { m[n.s] = v; return nil }
func (m mapWriter) Int32(n PropertyName, v int32) error    { m[n.s] = v; return nil }
func (m mapWriter) Int64(n PropertyName, v int64) error    { m[n.s] = v; return nil }
func (m mapWriter) Double(n PropertyName, v float64) error { m[n.s] = v; return nil }
func (m mapWriter) Time(n PropertyName, v time.Time) error { m[n.s] = v; return nil }
func (m mapWriter) GUID(n PropertyName, v GUID) error      { m[n.s] = v; return nil }

// SourceProperties writes src through WriteSource into a new map: the
// Properties of the Entity the source stands for. []byte values share
// memory with the source.
func SourceProperties(pk, rk string, src PropertySource, inBatch bool) (map[string]any, error) {
	m := make(mapWriter, 16)
	if _, err := WriteSource(pk, rk, src, inBatch, m); err != nil {
		return nil, err
	}
	return m, nil
}

// WithProperties returns a with the properties of its Source in
// Entity.Properties and Source cleared: the action as a backend without a
// typed path would take it. An action without a Source is returned as is.
func (a Action) WithProperties() (Action, error) {
	if a.Source == nil {
		return a, nil
	}
	if a.Entity.Properties != nil {
		return a, invalid("entity (%s, %s): an action has both Source and Entity.Properties: set one", quoteTrunc(a.Entity.PartitionKey), quoteTrunc(a.Entity.RowKey))
	}
	props, err := SourceProperties(a.Entity.PartitionKey, a.Entity.RowKey, a.Source, true)
	if err != nil {
		return a, err
	}
	a.Entity.Properties, a.Source = props, nil
	return a, nil
}

// WithAllProperties is WithProperties for every action; the error carries
// the index of the first action that fails.
func WithAllProperties(actions []Action) ([]Action, error) {
	var out []Action
	for i := range actions {
		if actions[i].Source == nil {
			continue
		}
		if out == nil {
			out = append([]Action(nil), actions...)
		}
		a, err := out[i].WithProperties()
		if err != nil {
			return nil, WithIndex(err, i)
		}
		out[i] = a
	}
	if out == nil {
		return actions, nil
	}
	return out, nil
}
