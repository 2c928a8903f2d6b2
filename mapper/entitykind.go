package mapper

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// Kind declares which rows of a table hold entities of a type, when one
// table (often one partition) holds several kinds side by side: a customer
// and its orders, an employee and its reviews, an entity and its index
// copies. A kind is told by a RowKey prefix, by a discriminator property,
// or by both.
//
// A type declares its kind in one place, a TableKind method:
//
//	func (Order) TableKind() mapper.Kind { return mapper.Kind{Prefix: "order_"} }
//
// and every Repository, Partition, Batch and Registry of the type then
//
//   - adds the kind's condition to every query (the RowKey range of the
//     prefix, the discriminator equal to Value), so a query never returns
//     a row of another kind;
//   - refuses to decode a row of another kind, a point read included, with
//     an error matching ErrWrongKind that names the row;
//   - writes the discriminator on every write, Replace included (a field
//     for the discriminator, if the type has one, is read back from it and
//     overwritten with Value on write), and refuses a value whose RowKey
//     does not start with the prefix.
//
// The prefix is part of the stored RowKey: the key your type produces (its
// rk field or its TableKeys method) must start with it. Building keys with
// keys.Join or a KeyMaker keeps it in one place.
type Kind struct {
	// Prefix, when set, starts the RowKey of every entity of the kind.
	Prefix string
	// Property, when set, is the discriminator: a string property every
	// entity of the kind carries, equal to Value.
	Property string
	// Value is the discriminator's value for this kind.
	Value string
	// Version, when 2 or more, is the version of the type's layout: the
	// stored discriminator becomes Value + "@" + Version ("employee@2"),
	// so rows written by each version of a struct stay apart. Version 0
	// and 1 store Value alone, so rows written before a type declared
	// versions are its version 1. Each version is a type of its own; a
	// Registry holding several versions of a kind reads old rows as the
	// newest version through the migrations given to Migrate. Versions
	// need a discriminator Property.
	Version int
}

// Marker returns the value the discriminator Property holds for the kind:
// Value, followed by "@" and the Version when it is 2 or more.
func (k Kind) Marker() string {
	if k.Version < 2 {
		return k.Value
	}
	return k.Value + "@" + strconv.Itoa(k.Version)
}

// KindDeclarer is implemented by types that declare their Kind. The
// method is called once, on the zero value, when the type is first
// mapped.
type KindDeclarer interface {
	TableKind() Kind
}

// ErrWrongKind matches the error for a row of another kind than the type
// it was read as.
var ErrWrongKind = errors.New("mapper: row of another kind")

var kindDeclarerType = reflect.TypeFor[KindDeclarer]()

// String describes the kind for messages.
func (k Kind) String() string {
	var parts []string
	if k.Prefix != "" {
		parts = append(parts, fmt.Sprintf("RowKey prefix %s", quote(k.Prefix)))
	}
	if k.Property != "" {
		parts = append(parts, fmt.Sprintf("%s = %s", k.Property, quote(k.Marker())))
	}
	return strings.Join(parts, ", ")
}

// declaredKind reads and checks the kind t declares, nil when none.
func declaredKind(t reflect.Type, c *codec) (*Kind, error) {
	var k Kind
	switch {
	case t.Implements(kindDeclarerType):
		k = reflect.New(t).Elem().Interface().(KindDeclarer).TableKind()
	case reflect.PointerTo(t).Implements(kindDeclarerType):
		k = reflect.New(t).Interface().(KindDeclarer).TableKind()
	default:
		return nil, nil
	}
	refuse := func(format string, args ...any) error {
		return &Error{Type: t, Msg: "TableKind: " + fmt.Sprintf(format, args...)}
	}
	if k.Prefix == "" && k.Property == "" {
		return nil, refuse("the kind sets neither a RowKey Prefix nor a discriminator Property")
	}
	switch {
	case k.Version < 0:
		return nil, refuse("Version %d is negative", k.Version)
	case k.Version >= 2 && k.Property == "":
		return nil, refuse("Version %d without a discriminator Property: a version is stored in the discriminator", k.Version)
	case k.Version >= 1 && strings.Contains(k.Value, "@"):
		return nil, refuse("Value %s holds '@', which separates the value from the version in the discriminator", quote(k.Value))
	}
	if k.Prefix != "" {
		if err := store.ValidateKeys("", k.Prefix); err != nil {
			return nil, &Error{Type: t, Msg: fmt.Sprintf("TableKind: prefix %s cannot start a RowKey", quote(k.Prefix)), Err: err}
		}
	}
	switch {
	case k.Property != "":
		if err := store.ValidatePropertyName(k.Property); err != nil {
			return nil, &Error{Type: t, Msg: fmt.Sprintf("TableKind: discriminator property %q", k.Property), Err: err}
		}
		if store.ReservedProperty(k.Property) {
			return nil, refuse("discriminator property %q starts with %q (store.ReservedPrefix), which tablekit keeps for its own properties", k.Property, store.ReservedPrefix)
		}
		if k.Value == "" {
			return nil, refuse("the discriminator %s has no Value", k.Property)
		}
		if f := c.byName[k.Property]; f != nil && f.kind != kString {
			return nil, f.errorf("the discriminator property %q must be a string field, not %s", k.Property, f.typ)
		}
	case k.Value != "":
		return nil, refuse("Value %s without a discriminator Property", quote(k.Value))
	}
	return &k, nil
}

// kindCond is the condition selecting the kind's rows; the zero Cond when
// the type declares no kind.
func (c *codec) kindCond() filter.Cond {
	if c.kind == nil {
		return filter.Cond{}
	}
	var conds []filter.Cond
	if c.kind.Prefix != "" {
		conds = append(conds, filter.RK.HasPrefix(c.kind.Prefix))
	}
	if c.kind.Property != "" {
		conds = append(conds, filter.Prop(c.kind.Property).Eq(c.kind.Marker()))
	}
	return filter.And(conds...)
}

// checkKey refuses a RowKey that does not start with the kind's prefix.
func (c *codec) checkKey(rk string) error {
	if c.kind == nil || c.kind.Prefix == "" || strings.HasPrefix(rk, c.kind.Prefix) {
		return nil
	}
	return &Error{Type: c.typ, Msg: "write refused", Err: refusal(
		"RowKey %s does not start with %s, the prefix of %s's kind: build the key with it (keys.Join, TableKeys)", quote(rk), quote(c.kind.Prefix), c.typ)}
}

// stampKind writes the discriminator into a value's properties: the kind
// wins over whatever a discriminator field holds.
func (c *codec) stampKind(props map[string]any) error {
	if c.kind != nil && c.kind.Property != "" {
		props[c.kind.Property] = c.marker
	}
	return nil
}

// checkKind refuses to decode a row of another kind.
func (c *codec) checkKind(e *store.Entity) error {
	if c.kind == nil {
		return nil
	}
	v := e.Properties[c.kind.Property]
	s, isString := v.(string)
	return c.checkRow(e.PartitionKey, e.RowKey, s, isString, v)
}

// checkRow refuses a row of another kind, from its keys and its
// discriminator's stored value: disc when it is a string (isString), else
// other (nil when the row has none). A type without a kind accepts every
// row.
func (c *codec) checkRow(pk, rk, disc string, isString bool, other any) error {
	if c.kind == nil {
		return nil
	}
	if c.kind.Prefix != "" && !strings.HasPrefix(rk, c.kind.Prefix) {
		return fmt.Errorf("%w: row (%s, %s) is not a %s: its RowKey does not start with %s",
			ErrWrongKind, quote(pk), quote(rk), c.typ, quote(c.kind.Prefix))
	}
	if c.kind.Property != "" && (!isString || disc != c.marker) {
		stored := quoteAny(other)
		if isString {
			stored = quote(disc)
		}
		return fmt.Errorf("%w: row (%s, %s) is not a %s: %s is %s, not %s",
			ErrWrongKind, quote(pk), quote(rk), c.typ, c.kind.Property, stored, quote(c.marker))
	}
	return nil
}

func quoteAny(v any) string {
	if v == nil {
		return "missing"
	}
	if s, ok := v.(string); ok {
		return quote(s)
	}
	return fmt.Sprintf("%v", v)
}

// refusal is the *store.Error of a value the mapper refuses: InvalidInput,
// made by tablekit's own checks.
func refusal(format string, args ...any) *store.Error {
	return refuseCode(store.CodeInvalidInput, 400, format, args...)
}

// refuseCode is a refusal with the code the service would give.
func refuseCode(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, format, args...)
	e.Source = store.SourceClient
	return e
}
