package wire

import (
	"bytes"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

const annotationSuffix = "@odata.type"

// annot is one "Name@odata.type" member seen in an entity object.
type annot struct {
	name []byte
	typ  store.EdmType
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
// (before or after the value) or, without one, by their JSON token.
// Annotations, null values (the service's "not stored") and the other
// odata.* metadata members are consumed silently. An error from fn stops
// the scan and is returned as is.
//
// Scan reads the object's bytes once and allocates nothing for an entity
// of up to 16 annotated properties and 32 values with unescaped names: a
// caller that converts values with the Property accessors pays only for
// the values it keeps.
func Scan(data []byte, fn func(p Property) error) error {
	s := scanner{data: data}
	if err := s.expect('{'); err != nil {
		return err
	}
	var annBuf [16]annot
	anns := annBuf[:0]
	var memBuf [32]member
	members := memBuf[:0]
	// One scan: check the object's structure, collect the annotations and
	// note where each member is.
	if s.peek() != '}' {
		for {
			tok, esc, err := s.stringToken()
			if err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
			m := member{tok: tok, esc: esc}
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
				anns = append(anns, annot{name: name[:len(name)-len(annotationSuffix)], typ: typ})
			} else if m.raw[0] != 'n' {
				members = append(members, m)
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
	// Deliver the values in wire order. The service writes each annotation
	// just before its value, so the next unused annotation is tried first.
	next := 0
	for i := range members {
		m := &members[i]
		name, err := memberName(m.tok, m.esc)
		if err != nil {
			return err
		}
		if bytes.HasSuffix(name, []byte(annotationSuffix)) || (bytes.HasPrefix(name, []byte("odata.")) && string(name) != "odata.etag") {
			continue // an annotation whose name token had escapes, or metadata
		}
		p := Property{Name: name, Raw: m.raw, escaped: m.rawEsc}
		if next < len(anns) && bytes.Equal(anns[next].name, name) {
			p.Type = anns[next].typ
			next++
		} else if t, ok := findAnnot(anns, name); ok {
			p.Type = t
		} else {
			switch c := m.raw[0]; {
			case c == '"':
				p.Type = store.EdmString
				if string(name) == "Timestamp" {
					p.Type = store.EdmDateTime
				}
			case c == 't' || c == 'f':
				p.Type = store.EdmBoolean
			case c == '{' || c == '[':
				return fmt.Errorf("wire: property %q: a JSON object or array is not a Table service value", name)
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

// member is where one member of an entity object is: its name token, its
// value token, and whether either holds escapes.
type member struct {
	tok, raw    []byte
	esc, rawEsc bool
}

func findAnnot(anns []annot, name []byte) (store.EdmType, bool) {
	for i := range anns {
		if bytes.Equal(anns[i].name, name) {
			return anns[i].typ, true
		}
	}
	return "", false
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
	return Scan(data, func(p Property) error {
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
