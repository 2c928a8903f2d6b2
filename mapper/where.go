package mapper

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Cond is a condition on entities of type T, built with Where and joined
// with And, Or and Not. It holds a store/filter condition, so every value
// is escaped; a condition built from a bad name or value carries the error
// and a query with it fails with that error before any request is sent.
// The zero Cond matches every entity.
type Cond[T any] struct {
	c   filter.Cond
	err error // a typing error, found before the filter builder runs
}

// Err returns the error the condition carries: a *Error naming the field
// for a name or value that does not fit T, or the filter builder's error.
func (c Cond[T]) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.c.Err()
}

// String returns the escaped $filter text ("" for the zero Cond). A
// condition carrying an error prints as text every parser refuses; check
// Err first.
func (c Cond[T]) String() string {
	if c.err != nil {
		return "<invalid filter: " + c.err.Error() + ">"
	}
	return c.c.String()
}

// Filter returns the untyped store/filter condition.
func (c Cond[T]) Filter() filter.Cond { return c.c }

// And holds when c and every one of others hold.
func (c Cond[T]) And(others ...Cond[T]) Cond[T] {
	all, err := unwrap(c, others)
	if err != nil {
		return Cond[T]{err: err}
	}
	return Cond[T]{c: filter.And(all...)}
}

// Or holds when c or any one of others holds.
func (c Cond[T]) Or(others ...Cond[T]) Cond[T] {
	all, err := unwrap(c, others)
	if err != nil {
		return Cond[T]{err: err}
	}
	return Cond[T]{c: filter.Or(all...)}
}

// Not holds when c does not.
func Not[T any](c Cond[T]) Cond[T] {
	if c.err != nil {
		return c
	}
	return Cond[T]{c: filter.Not(c.c)}
}

// Untyped wraps a store/filter condition built without T's field checks,
// for the rare filter Where cannot express.
func Untyped[T any](c filter.Cond) Cond[T] { return Cond[T]{c: c} }

// Parsed returns the condition of a parsed $filter (filter.Parse), for a
// filter string from elsewhere: a request parameter, another client, a
// configuration file. Its property names are not checked against T.
func Parsed[T any](f *filter.Filter) Cond[T] { return Cond[T]{c: f.Cond()} }

// ParseCond parses a $filter string into a condition on T. A malformed
// filter gives a condition carrying the parser's error (InvalidInput),
// which a query reports before sending anything.
func ParseCond[T any](text string) Cond[T] {
	f, err := filter.Parse(text)
	if err != nil {
		return Cond[T]{err: err}
	}
	return Parsed[T](f)
}

// Any returns the condition for use where the type is not known
// statically: a Registry's queries, which read several types.
func (c Cond[T]) Any() Cond[any] { return Cond[any](c) }

func unwrap[T any](c Cond[T], others []Cond[T]) ([]filter.Cond, error) {
	all := make([]filter.Cond, 0, 1+len(others))
	for _, o := range append([]Cond[T]{c}, others...) {
		if o.err != nil {
			return nil, o.err
		}
		all = append(all, o.c)
	}
	return all, nil
}

// and joins conditions, the zero Cond matching everything.
func and[T any](conds []Cond[T]) Cond[T] {
	if len(conds) == 0 {
		return Cond[T]{}
	}
	return conds[0].And(conds[1:]...)
}

// Field is a property of T to compare, named by Where. Its comparison
// methods take a Go value that must convert to the property's EDM type
// without loss: any Go integer for an integer field (range-checked against
// the field's Go type), an integer or float for a float field, a string
// kind for a string field, a value of the field's own type for a
// TextMarshaler or PropertyMarshaler field, time.Time, []byte, a
// store.GUID or [16]byte for their fields.
type Field[T any] struct {
	name string
	// untyped: a field of Where[any], whose literal is the value itself.
	untyped bool
	f       *field // nil for the keys and Timestamp
	sys     reflect.Type
	err     error
}

// Where names a field of T by its property name or its Go field name.
// PartitionKey, RowKey and Timestamp (or the Go names of the fields
// tagged for them) name the system properties. An unknown name makes
// every condition built from it carry an *Error.
//
//	mapper.Where[Employee]("Age").Gt(30)
func Where[T any](name string) Field[T] {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		// Where[any], for a Registry's queries over several types: the
		// value's own type decides the literal, as in filter.Prop.
		switch name {
		case "PartitionKey", "RowKey":
			return Field[T]{name: name, sys: reflect.TypeFor[string]()}
		case "Timestamp":
			return Field[T]{name: name, sys: timeType}
		}
		if err := store.ValidatePropertyName(name); err != nil {
			return Field[T]{name: name, err: &Error{Property: name, Msg: "Where", Err: err}}
		}
		return Field[T]{name: name, untyped: true}
	}
	c, err := codecFor(t)
	if err != nil {
		return Field[T]{name: name, err: err}
	}
	fld := Field[T]{name: name}
	switch {
	case name == "PartitionKey" || (c.pk != nil && name == c.pk.goPath):
		fld.name, fld.sys = "PartitionKey", reflect.TypeFor[string]()
	case name == "RowKey" || (c.rk != nil && name == c.rk.goPath):
		fld.name, fld.sys = "RowKey", reflect.TypeFor[string]()
	case name == "Timestamp" || (c.ts != nil && name == c.ts.goPath):
		fld.name, fld.sys = "Timestamp", timeType
	default:
		fld.f = c.byName[name]
		if fld.f == nil {
			for i := range c.fields {
				if c.fields[i].goPath == name {
					fld.f = &c.fields[i]
					break
				}
			}
		}
		if fld.f == nil {
			fld.err = &Error{Type: t, Field: name, Msg: fmt.Sprintf("no property or field named %q (properties: %s)", name, strings.Join(c.selectNames, ", "))}
			return fld
		}
		fld.name = fld.f.name
		if fld.f.kind == kJSON {
			fld.err = fld.f.errorf("a property stored as JSON cannot be compared in a filter")
		}
	}
	return fld
}

// Eq holds when the property equals v.
func (f Field[T]) Eq(v any) Cond[T] { return f.cmp(filter.Eq, v) }

// Ne holds when the property has v's type and differs from v; an entity
// without the property does not match.
func (f Field[T]) Ne(v any) Cond[T] { return f.cmp(filter.Ne, v) }

// Gt holds when the property is greater than v.
func (f Field[T]) Gt(v any) Cond[T] { return f.cmp(filter.Gt, v) }

// Ge holds when the property is greater than or equal to v.
func (f Field[T]) Ge(v any) Cond[T] { return f.cmp(filter.Ge, v) }

// Lt holds when the property is less than v.
func (f Field[T]) Lt(v any) Cond[T] { return f.cmp(filter.Lt, v) }

// Le holds when the property is less than or equal to v.
func (f Field[T]) Le(v any) Cond[T] { return f.cmp(filter.Le, v) }

// Between holds when lo <= property < hi.
func (f Field[T]) Between(lo, hi any) Cond[T] { return f.Ge(lo).And(f.Lt(hi)) }

// InRange holds when a string property (typically RowKey or PartitionKey)
// lies in rng, a range from package keys such as keys.PrefixOf,
// keys.PrefixRange or keys.Between. Like every range in tablekit it is
// half-open: rng.Upper itself is excluded unless rng.UpperIncluded is set.
// The zero Range matches every entity.
func (f Field[T]) InRange(rng keys.Range) Cond[T] {
	var parts []Cond[T]
	if rng.Lower != "" {
		parts = append(parts, f.Ge(rng.Lower))
	}
	if rng.HasUpper {
		if rng.UpperIncluded {
			parts = append(parts, f.Le(rng.Upper))
		} else {
			parts = append(parts, f.Lt(rng.Upper))
		}
	}
	if _, err := f.literal(""); err != nil {
		return Cond[T]{err: err}
	}
	return and(parts)
}

// HasPrefix holds when a string property starts with prefix.
func (f Field[T]) HasPrefix(prefix string) Cond[T] {
	lit, err := f.literal(prefix)
	if err != nil {
		return Cond[T]{err: err}
	}
	if _, ok := lit.(string); !ok {
		return Cond[T]{err: f.f.errorf("HasPrefix needs an Edm.String property, not %s", f.f.edm)}
	}
	return Cond[T]{c: filter.Prop(f.name).HasPrefix(prefix)}
}

func (f Field[T]) cmp(op filter.Op, v any) Cond[T] {
	lit, err := f.literal(v)
	if err != nil {
		return Cond[T]{err: err}
	}
	p := filter.Prop(f.name)
	var c filter.Cond
	switch op {
	case filter.Eq:
		c = p.Eq(lit)
	case filter.Ne:
		c = p.Ne(lit)
	case filter.Gt:
		c = p.Gt(lit)
	case filter.Ge:
		c = p.Ge(lit)
	case filter.Lt:
		c = p.Lt(lit)
	default:
		c = p.Le(lit)
	}
	return Cond[T]{c: c}
}

// literal converts v to the store value the property holds.
func (f Field[T]) literal(v any) (any, error) {
	if f.err != nil {
		return nil, f.err
	}
	rv := reflect.ValueOf(v)
	if f.untyped {
		return v, nil
	}
	if f.f == nil {
		if !rv.IsValid() || (rv.Type() != f.sys && !(f.sys.Kind() == reflect.String && rv.Kind() == reflect.String)) {
			return nil, &Error{Type: reflect.TypeFor[T](), Property: f.name, Field: f.name,
				Msg: fmt.Sprintf("cannot compare %s (Go %s) with %s", f.name, f.sys, describe(v))}
		}
		if rv.Kind() == reflect.String {
			return rv.String(), nil
		}
		return v, nil
	}
	return f.f.literal(v, rv)
}

func describe(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T value %v", v, v)
}

// literal converts a Go value to the store value field f stores, refusing
// any value whose type or range does not fit the field.
func (f *field) literal(v any, rv reflect.Value) (any, error) {
	bad := func(why string) error {
		return f.errorf("cannot compare %s (Go %s, stored as %s) with %s%s", f.name, f.typ, edmName(f), describe(v), why)
	}
	if !rv.IsValid() {
		return nil, bad(": a filter has no null (an absent property matches no comparison)")
	}
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && f.ptr {
		rv = rv.Elem()
	}
	probe := reflect.New(f.elem).Elem()
	switch f.kind {
	case kString:
		if rv.Kind() == reflect.String {
			return rv.String(), nil
		}
	case kBool:
		if rv.Kind() == reflect.Bool {
			return rv.Bool(), nil
		}
	case kInt, kUint:
		var n int64
		switch {
		case rv.CanInt():
			n = rv.Int()
		case rv.CanUint():
			u := rv.Uint()
			if u > math.MaxInt64 {
				return nil, bad(": out of range")
			}
			n = int64(u)
		default:
			return nil, bad("")
		}
		if (f.kind == kInt && probe.OverflowInt(n)) || (f.kind == kUint && (n < 0 || probe.OverflowUint(uint64(n)))) {
			return nil, bad(fmt.Sprintf(": %d is out of the range of %s", n, f.elem))
		}
		if f.edm == store.EdmInt32 {
			return int32(n), nil
		}
		return n, nil
	case kFloat:
		switch {
		case rv.CanFloat():
			return rv.Float(), nil
		case rv.CanInt():
			return float64(rv.Int()), nil
		case rv.CanUint():
			return float64(rv.Uint()), nil
		}
	case kTime:
		if rv.Type() == timeType || rv.Type() == f.elem {
			t, err := f.checkTime(rv.Convert(timeType).Interface().(time.Time))
			return t, err
		}
	case kBytes:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return rv.Bytes(), nil
		}
	case kGUID:
		if rv.Kind() == reflect.Array && rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8 {
			var g store.GUID
			reflect.Copy(reflect.ValueOf(g[:]), rv)
			return g, nil
		}
	case kText, kCustom:
		if rv.Type() == f.elem {
			probe.Set(rv)
			return f.encode(probe)
		}
		if f.kind == kText && rv.Kind() == reflect.String {
			return rv.String(), nil
		}
	}
	return nil, bad("")
}

func edmName(f *field) string {
	if f.edm == "" {
		return "the type its MarshalTableProperty returns"
	}
	return string(f.edm)
}
