package wire

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/tablekit/tablekit/store"
)

const annotationSuffix = "@odata.type"

// annot is one "Name@odata.type" member seen in an entity object.
type annot struct {
	name []byte
	typ  store.EdmType
	used bool // paired with the value next to it
}

// edmType maps an annotation value to its type; ok is false for a type
// the Table service does not store.
func edmType(b []byte) (store.EdmType, bool) {
	switch string(b) {
	case "Edm.String":
		return store.EdmString, true
	case "Edm.Binary":
		return store.EdmBinary, true
	case "Edm.Boolean":
		return store.EdmBoolean, true
	case "Edm.Int32":
		return store.EdmInt32, true
	case "Edm.Int64":
		return store.EdmInt64, true
	case "Edm.Double":
		return store.EdmDouble, true
	case "Edm.DateTime":
		return store.EdmDateTime, true
	case "Edm.Guid":
		return store.EdmGuid, true
	}
	return "", false
}

// memberName returns the unescaped content of a name token.
func memberName(tok []byte, escaped bool) ([]byte, error) {
	if !escaped {
		if b := tok[1 : len(tok)-1]; validUTF8(b) {
			return b, nil
		}
	}
	s, err := unquote(tok, true)
	return []byte(s), err
}

// Scan reads one entity object and calls fn for each property with a
// value, in wire order: PartitionKey, RowKey, Timestamp and odata.etag
// included, custom properties typed by their "@odata.type" annotation
// (before or after the value, next to it or anywhere in the object) or,
// without one, by their JSON token. Annotations, null values (the
// service's "not stored") and the other odata.* metadata members are
// consumed silently. An error from fn stops the scan and is returned as
// is.
//
// Scan reads the object's bytes once and allocates nothing for an entity
// of up to 16 annotated properties and 32 values with unescaped names: a
// caller that converts values with the Property accessors pays only for
// the values it keeps. Its cost grows in proportion to the properties: an
// annotation is paired with its value as the scan meets them side by
// side, which is where the service writes it, and only an annotation
// left unpaired is looked for by name.
func Scan(data []byte, fn func(p Property) error) error {
	return scan(data, nil, fn)
}

// scan is Scan, calling begin (when set) with the number of values before
// the first call of fn.
func scan(data []byte, begin func(n int), fn func(p Property) error) error {
	s := scanner{data: data}
	if err := s.expect('{'); err != nil {
		return err
	}
	var annBuf [16]annot
	anns := annBuf[:0]
	var memBuf [32]member
	members := memBuf[:0]
	var big *scanBufs // an entity past the arrays above
	defer release(&big, &anns, &members)
	paired := 0 // annotations paired with a value
	// One scan: check the object's structure, collect the annotations,
	// note where each value is and pair the neighbours.
	if s.peek() != '}' {
		for {
			tok, esc, err := s.stringToken()
			if err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
			var m member
			if s.peek() == '"' {
				m.raw, m.rawEsc, err = s.stringToken()
			} else {
				m.raw, err = s.valueToken()
			}
			if err != nil {
				return err
			}
			if len(tok) >= 2+len(annotationSuffix) && bytes.HasSuffix(tok[:len(tok)-1], []byte(annotationSuffix)) {
				name, err := memberName(tok, esc)
				if err != nil {
					return s.errf(err.Error())
				}
				if len(m.raw) < 2 || m.raw[0] != '"' {
					return fmt.Errorf("wire: annotation %q is not a string", name)
				}
				typ, ok := edmType(m.raw[1 : len(m.raw)-1])
				if !ok {
					return fmt.Errorf("wire: property %q has unsupported type %s", name[:len(name)-len(annotationSuffix)], m.raw)
				}
				a := annot{name: name[:len(name)-len(annotationSuffix)], typ: typ}
				// An annotation after its value.
				if n := len(members); n > 0 && members[n-1].typ == "" && bytes.Equal(members[n-1].name, a.name) {
					members[n-1].typ, a.used = typ, true
					paired++
				}
				if len(anns) == cap(anns) {
					anns = grow(anns, &spare(&big).anns)
				}
				anns = append(anns, a)
			} else if m.raw[0] != 'n' {
				if m.name, err = memberName(tok, esc); err != nil {
					return err
				}
				if !bytes.HasSuffix(m.name, []byte(annotationSuffix)) && (!bytes.HasPrefix(m.name, []byte("odata.")) || string(m.name) == "odata.etag") {
					// An annotation just before its value.
					if n := len(anns); n > 0 && !anns[n-1].used && bytes.Equal(anns[n-1].name, m.name) {
						m.typ, anns[n-1].used = anns[n-1].typ, true
						paired++
					}
					if len(members) == cap(members) {
						members = grow(members, &spare(&big).members)
					}
					members = append(members, m)
				} // else an annotation whose name token had escapes, or metadata
			}
			c := s.peek()
			if c == '}' {
				s.pos++
				break
			}
			if c != ',' {
				return s.errf("want ',' or '}' in object")
			}
			s.pos++
		}
	} else {
		s.pos++
	}
	if err := s.end(); err != nil {
		return err
	}
	if begin != nil {
		begin(len(members))
	}
	// Deliver the values in wire order.
	for i := range members {
		m := &members[i]
		p := Property{Name: m.name, Raw: m.raw, Type: m.typ, escaped: m.rawEsc}
		if p.Type == "" && paired < len(anns) {
			p.Type = findAnnot(anns, m.name) // an annotation away from its value
		}
		if p.Type == "" {
			switch c := m.raw[0]; {
			case c == '"':
				p.Type = store.EdmString
				if string(m.name) == "Timestamp" {
					p.Type = store.EdmDateTime
				}
			case c == 't' || c == 'f':
				p.Type = store.EdmBoolean
			case c == '{' || c == '[':
				return fmt.Errorf("wire: property %q: a JSON object or array is not a Table service value", m.name)
			default:
				p.Type = numberType(m.raw)
			}
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// member is one value of an entity object: its name, its value token,
// whether that holds escapes, and the type of the annotation paired with
// it ("" when none is yet).
type member struct {
	name, raw []byte
	typ       store.EdmType
	rawEsc    bool
}

// scanBufs holds the slices of an entity with more annotations or values
// than scan's arrays, kept in scanPool for the next such entity (a wide
// entity has up to 255 of each).
type scanBufs struct {
	anns    []annot
	members []member
}

var scanPool = sync.Pool{New: func() any { return new(scanBufs) }}

// spare returns *b, taken from scanPool first when nil.
func spare(b **scanBufs) *scanBufs {
	if *b == nil {
		*b = scanPool.Get().(*scanBufs)
	}
	return *b
}

// grow returns a slice of twice buf's capacity holding buf's elements,
// from *spare when that is large enough (a new one, kept in *spare, when
// not).
func grow[E any](buf []E, spare *[]E) []E {
	if cap(*spare) < 2*cap(buf) {
		*spare = make([]E, 0, 2*cap(buf))
	}
	return (*spare)[:copy((*spare)[:len(buf)], buf)]
}

// release clears what a scan left in *b (references to its input) and
// returns *b to the pool, unless it is nil or grew past a thousand
// entries.
func release(b **scanBufs, anns *[]annot, members *[]member) {
	if *b == nil {
		return
	}
	clear(*anns)
	clear(*members)
	if cap((*b).anns) > 1024 || cap((*b).members) > 1024 {
		return
	}
	scanPool.Put(*b)
}

// findAnnot returns the type of the first annotation of name not paired
// with a value next to it, or "".
func findAnnot(anns []annot, name []byte) store.EdmType {
	for i := range anns {
		if !anns[i].used && bytes.Equal(anns[i].name, name) {
			return anns[i].typ
		}
	}
	return ""
}

// numberType infers the type of an unannotated number: Edm.Int32 when it
// has no fraction or exponent and fits in 32 bits, Edm.Double otherwise.
func numberType(raw []byte) store.EdmType {
	if bytes.ContainsAny(raw, ".eE") {
		return store.EdmDouble
	}
	if v, ok := parseInt(raw); ok && v >= -1<<31 && v < 1<<31 {
		return store.EdmInt32
	}
	return store.EdmDouble
}

// DecodeEntity reads one entity object, as a point read or an insert
// returns it, into a store.Entity: keys, Timestamp, ETag (from odata.etag)
// and every custom property converted to store's Go type for its EDM type.
func DecodeEntity(data []byte) (store.Entity, error) {
	var e store.Entity
	err := decodeInto(data, &e)
	return e, err
}

func decodeInto(data []byte, e *store.Entity) error {
	return scan(data, func(n int) {
		if n > 4 { // PartitionKey, RowKey, Timestamp and odata.etag are not properties
			e.Properties = make(map[string]any, n-4)
		}
	}, func(p Property) error {
		var err error
		switch string(p.Name) {
		case "PartitionKey":
			e.PartitionKey, err = p.AsString()
			return err
		case "RowKey":
			e.RowKey, err = p.AsString()
			return err
		case "Timestamp":
			e.Timestamp, err = p.AsTime()
			return err
		case "odata.etag":
			var s string
			s, err = p.AsString()
			e.ETag = store.ETag(s)
			return err
		}
		v, err := p.Value()
		if err != nil {
			return err
		}
		if e.Properties == nil {
			e.Properties = make(map[string]any, 8)
		}
		e.Properties[string(p.Name)] = v
		return nil
	})
}

// EachEntity walks a query response, {"value":[{...},{...}]} with any other
// top-level members ignored, and calls fn with the raw bytes of each
// entity object in order, for DecodeEntity, Scan or a mapper's decoder.
func EachEntity(data []byte, fn func(obj []byte) error) error {
	s := scanner{data: data}
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return s.end()
	}
	for {
		tok, _, err := s.stringToken()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if string(tok) == `"value"` {
			if err := s.expect('['); err != nil {
				return err
			}
			if s.peek() == ']' {
				s.pos++
			} else {
				for {
					if s.peek() != '{' {
						return s.errf("want an entity object in \"value\"")
					}
					obj, err := s.compound()
					if err != nil {
						return err
					}
					if err := fn(obj); err != nil {
						return err
					}
					c := s.peek()
					s.pos++
					if c == ']' {
						break
					}
					if c != ',' {
						s.pos--
						return s.errf("want ',' or ']' in \"value\"")
					}
				}
			}
		} else if _, err := s.valueToken(); err != nil {
			return err
		}
		c := s.peek()
		s.pos++
		if c == '}' {
			return s.end()
		}
		if c != ',' {
			s.pos--
			return s.errf("want ',' or '}' in object")
		}
	}
}

// DecodeEntities decodes every entity of a query response.
func DecodeEntities(data []byte) ([]store.Entity, error) {
	var out []store.Entity
	err := EachEntity(data, func(obj []byte) error {
		out = append(out, store.Entity{})
		return decodeInto(obj, &out[len(out)-1])
	})
	return out, err
}
