package mapper

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/tablekit/tablekit/store"
)

// KeyMaker is implemented by types that compute their PartitionKey and
// RowKey, typically as compound keys built with package keys, instead of
// tagging fields pk and rk.
type KeyMaker interface {
	TableKeys() (pk, rk string, err error)
}

// KeySetter is the decode side of KeyMaker: it receives the keys of a
// loaded entity, typically splitting compound keys back into fields. A
// type implementing KeyMaker but not KeySetter ignores the keys on decode.
type KeySetter interface {
	SetTableKeys(pk, rk string) error
}

var (
	keyMakerType  = reflect.TypeFor[KeyMaker]()
	keySetterType = reflect.TypeFor[KeySetter]()
)

// field is one mapped struct field, precomputed once per type.
type field struct {
	owner  reflect.Type // the struct type mapped
	goPath string       // Go field path for errors, e.g. "Address.City"
	name   string       // property name
	index  []int        // index path from the root struct
	typ    reflect.Type // declared type
	elem   reflect.Type // typ, or typ.Elem() for a pointer field
	ptr    bool         // declared type is a pointer
	// viaPtr: the index path crosses an embedded pointer, which may be nil.
	viaPtr    bool
	kind      kind
	edm       store.EdmType // "" for kCustom: the value decides
	role      role
	omitEmpty bool
	tagged    bool // named by a tag (for embedded-field dominance)
	depth     int

	// wirePre is what store/wire writes before the value: the annotation,
	// if any, and ,"Name":.
	wirePre []byte
	// pname is name, checked, for the typed path (store.PropertyWriter).
	pname store.PropertyName
}

// codec is the compiled mapping of one struct type.
type codec struct {
	typ    reflect.Type
	fields []field // properties, in struct field order
	// sorted is fields in ascending property-name order (the wire order).
	sorted []*field
	byName map[string]*field
	pk, rk *field
	etag   *field
	ts     *field
	extra  *field
	// keyMethod: *T implements KeyMaker (with a value or pointer receiver).
	keyMethod   bool
	keySetter   bool
	selectNames []string
	// kind is the kind the type declares (TableKind), nil when none.
	kind *Kind
	// large holds the indexes in fields of the fields tagged large (large.go).
	large []int
	// kindName is the discriminator property's name, checked, and marker
	// the value it holds (Kind.Marker), made once.
	kindName store.PropertyName
	marker   string
}

// codecs caches compiled codecs by reflect.Type. It is a cache of pure
// functions of the type, so sharing it across stores and goroutines is safe.
var codecs sync.Map // reflect.Type -> *codecEntry

type codecEntry struct {
	c   *codec
	err error
}

// codecFor returns the compiled codec of struct type t, compiling it on
// first use. The error of a type that cannot be mapped is cached too.
func codecFor(t reflect.Type) (*codec, error) {
	if e, ok := codecs.Load(t); ok {
		ce := e.(*codecEntry)
		return ce.c, ce.err
	}
	c, err := compile(t)
	e, _ := codecs.LoadOrStore(t, &codecEntry{c, err})
	ce := e.(*codecEntry)
	return ce.c, ce.err
}

// compile builds the codec of struct type t.
func compile(t reflect.Type) (*codec, error) {
	if t.Kind() != reflect.Struct {
		return nil, &Error{Type: t, Msg: fmt.Sprintf("cannot map %s: want a struct or a pointer to a struct", t)}
	}
	var cands []field
	if err := collect(t, t, nil, "", 0, false, map[reflect.Type]bool{t: true}, &cands); err != nil {
		return nil, err
	}
	c := &codec{typ: t, byName: make(map[string]*field)}
	// Dominance, as in encoding/json: for each name the shallowest field
	// wins; at equal depth a single tagged field wins; otherwise, unlike
	// encoding/json, which drops the name, it is an error.
	groups := map[string][]int{}
	var order []string
	for i := range cands {
		k := groupKey(&cands[i])
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var keep []field
	for _, k := range order {
		idx := groups[k]
		best := cands[idx[0]].depth
		for _, i := range idx {
			best = min(best, cands[i].depth)
		}
		var top []int
		for _, i := range idx {
			if cands[i].depth == best {
				top = append(top, i)
			}
		}
		if len(top) > 1 {
			var tagged []int
			for _, i := range top {
				if cands[i].tagged {
					tagged = append(tagged, i)
				}
			}
			if len(tagged) != 1 {
				// encoding/json drops the name silently; a storage mapper
				// would then lose data, so it is an error.
				if len(tagged) > 1 {
					top = tagged
				}
				a, b := &cands[top[0]], &cands[top[1]]
				what := fmt.Sprintf("property %q", a.name)
				if a.role != roleProp {
					what = "the " + a.role.String() + " role"
				}
				return nil, &Error{Type: t, Field: b.goPath, Property: a.name,
					Msg: fmt.Sprintf("%s is claimed by both %s and %s at the same depth: rename one, or tag the one that should win", what, a.goPath, b.goPath)}
			}
			top = tagged
		}
		keep = append(keep, cands[top[0]])
	}
	slices.SortStableFunc(keep, func(a, b field) int { return slices.Compare(a.index, b.index) })
	for _, f := range keep {
		switch f.role {
		case roleProp:
			c.fields = append(c.fields, f)
		case rolePK:
			c.pk = &f
		case roleRK:
			c.rk = &f
		case roleETag:
			c.etag = &f
		case roleTimestamp:
			c.ts = &f
		case roleExtra:
			c.extra = &f
		}
	}
	for i := range c.fields {
		f := &c.fields[i]
		c.byName[f.name] = f
		c.sorted = append(c.sorted, f)
		c.selectNames = append(c.selectNames, f.name)
		f.wirePre = wirePrefix(f.name, f.edm)
		pname, err := store.NewPropertyName(f.name)
		if err != nil {
			return nil, f.wrap(err, "invalid property name %q", f.name)
		}
		if store.ReservedProperty(f.name) {
			return nil, f.errorf("property name %q starts with %q (store.ReservedPrefix), which tablekit keeps for its own properties: name the property otherwise with a tag", f.name, store.ReservedPrefix)
		}
		f.pname = pname
	}
	slices.SortFunc(c.sorted, func(a, b *field) int { return strings.Compare(a.name, b.name) })
	pt := reflect.PointerTo(t)
	c.keyMethod = pt.Implements(keyMakerType)
	c.keySetter = pt.Implements(keySetterType)
	if c.keyMethod {
		for _, f := range []*field{c.pk, c.rk} {
			if f != nil {
				return nil, f.errorf("tagged %s but %s computes its keys with TableKeys: drop the tag option", f.role, t)
			}
		}
	} else if c.pk == nil || c.rk == nil {
		which := "PartitionKey"
		if c.pk != nil {
			which = "RowKey"
		}
		return nil, &Error{Type: t, Msg: fmt.Sprintf("no %s: tag a string field with the option %s, or implement TableKeys() (pk, rk string, err error)", which, map[string]string{"PartitionKey": "pk", "RowKey": "rk"}[which])}
	}
	kind, err := declaredKind(t, c)
	if err != nil {
		return nil, err
	}
	c.kind = kind
	if kind != nil {
		c.marker = kind.Marker()
	}
	if kind != nil && kind.Property != "" {
		if c.kindName, err = store.NewPropertyName(kind.Property); err != nil {
			return nil, &Error{Type: t, Msg: "kind property", Err: err}
		}
	}
	if kind != nil && kind.Property != "" && c.byName[kind.Property] == nil {
		// Reads select the discriminator too, so they can check it.
		c.selectNames = append(c.selectNames, kind.Property)
	}
	if err := c.compileLarge(); err != nil {
		return nil, err
	}
	return c, nil
}

// groupKey is the name a field competes for: its property name, or its
// role for the system fields.
func groupKey(f *field) string {
	if f.role != roleProp {
		return "\x00" + f.role.String()
	}
	return f.name
}

// systemRole maps an untagged field named like a system property to its role.
func systemRole(name string, t reflect.Type) role {
	switch {
	case name == "PartitionKey" && t.Kind() == reflect.String:
		return rolePK
	case name == "RowKey" && t.Kind() == reflect.String:
		return roleRK
	case name == "ETag" && t.Kind() == reflect.String:
		return roleETag
	case name == "Timestamp" && t == timeType:
		return roleTimestamp
	}
	return roleProp
}

// collect walks struct type t depth-first in field order, appending every
// mappable field (with embedded structs flattened) to out.
func collect(root, t reflect.Type, index []int, path string, depth int, viaPtr bool, onPath map[reflect.Type]bool, out *[]field) error {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("table")
		if !sf.IsExported() && !sf.Anonymous {
			continue
		}
		opts, err := parseTag(tag)
		goPath := sf.Name
		if path != "" {
			goPath = path + "." + sf.Name
		}
		if err != nil {
			return &Error{Type: root, Field: goPath, Msg: fmt.Sprintf("tag `table:%q`: %v", tag, err)}
		}
		if opts.skip {
			continue
		}
		ft := sf.Type
		idx := append(slices.Clip(index), i)
		if sf.Anonymous && opts.name == "" && opts.role == roleProp && !opts.json {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct && flattens(et) {
				if onPath[et] {
					continue // a cycle through embedded pointers
				}
				onPath[et] = true
				err := collect(root, et, idx, goPath, depth+1, viaPtr || ft.Kind() == reflect.Pointer, onPath, out)
				delete(onPath, et)
				if err != nil {
					return err
				}
				continue
			}
			if !sf.IsExported() {
				continue
			}
		}
		f := field{
			owner: root, goPath: goPath, name: sf.Name, index: idx, typ: ft, elem: ft,
			viaPtr: viaPtr, role: opts.role, omitEmpty: opts.omitEmpty, depth: depth,
			// A name or an explicit role in the tag dominates, as a
			// JSON name does in encoding/json.
			tagged: hasTag && (opts.name != "" || opts.role != roleProp),
		}
		if opts.name != "" {
			f.name = opts.name
		}
		if opts.name == "" && opts.role == roleProp && !opts.json {
			f.role = systemRole(sf.Name, ft)
		}
		if ft.Kind() == reflect.Pointer {
			f.ptr = true
			f.elem = ft.Elem()
		}
		if err := checkRole(&f, opts); err != nil {
			return err
		}
		*out = append(*out, f)
	}
	return nil
}

// flattens reports whether an embedded struct type is flattened (rather
// than mapped as one value): time.Time and self-encoding types are values.
func flattens(t reflect.Type) bool {
	return !isTime(t) && !implements(t, propMarshalerType) && !implements(t, textMarshalerType)
}

// checkRole validates a field for its role and classifies property fields.
func checkRole(f *field, opts tagOptions) error {
	switch f.role {
	case rolePK, roleRK:
		if f.typ.Kind() != reflect.String {
			return f.errorf("a %s field must have a string kind, not %s", f.role, f.typ)
		}
	case roleETag:
		if f.typ.Kind() != reflect.String {
			return f.errorf("an etag field must be store.ETag or a string kind, not %s", f.typ)
		}
	case roleTimestamp:
		if f.typ != timeType {
			return f.errorf("a timestamp field must be time.Time, not %s", f.typ)
		}
	case roleExtra:
		if f.typ != extraType {
			return f.errorf("an extra field must be map[string]any, not %s", f.typ)
		}
	case roleProp:
		if err := store.ValidatePropertyName(f.name); err != nil {
			return f.wrap(err, "invalid property name %q (rename it with a tag)", f.name)
		}
		if f.ptr && f.elem.Kind() == reflect.Pointer {
			return f.errorf("unsupported type %s: only one level of pointer is supported", f.typ)
		}
		k, edm, err := classify(f.elem, opts.json)
		if err != nil {
			return f.errorf("%v", err)
		}
		if k == kJSON && f.ptr {
			// json handles pointers itself: keep the pointer as the value.
			f.ptr, f.elem = false, f.typ
		}
		f.kind, f.edm = k, edm
	}
	return nil
}
