package mapper

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// The typed lane of RegistryTable.Query: over a store.TypedTable each
// entity is read straight into a value of its registered type, with no
// store.Entity in between. The backend hands the keys first, so a prefix
// registry knows the kind at the RowKey and streams every member after it
// into that kind's reader. A property registry learns the kind only when
// the discriminator comes, among the properties in any order: the members
// before it are recorded (their names copied, as EntityReader asks) and
// replayed into the kind's reader, and the members after it stream. The
// values, errors, versions and migrations are those of Registry.Decode.

// registryPage reads the entities of one page for a registry.
type registryPage struct {
	r       *Registry
	readers map[*kindType]*reader
	out     []registryRow

	// The entity being read.
	open          bool
	pk, rk        string
	ts            time.Time
	hasTS         bool
	etag          store.ETag
	hasETag       bool
	k             *kindType // nil until the kind is known
	cur           *reader   // k's reader
	tape          []member  // a property registry's members before the kind
	marker        any       // the discriminator's value when it named no kind
	markerSeen    bool
	unknownPrefix bool
}

// registryRow is one entity's value or error.
type registryRow struct {
	v   any
	err error
}

// member is a recorded property: its name (copied), its type and value.
type member struct {
	name string
	typ  store.EdmType
	s    string
	b    []byte
	n    int64
	f    float64
	t    time.Time
	g    store.GUID
	bool bool
}

// next is the QueryInto callback: the entity before is done.
func (p *registryPage) next() store.EntityReader {
	p.flush()
	p.open = true
	p.pk, p.rk, p.ts, p.hasTS, p.etag, p.hasETag = "", "", time.Time{}, false, "", false
	p.k, p.cur, p.tape = nil, nil, p.tape[:0]
	p.marker, p.markerSeen, p.unknownPrefix = nil, false, false
	return p
}

// flush ends the entity being read: its value or error joins out.
func (p *registryPage) flush() {
	if !p.open {
		return
	}
	p.open = false
	if p.k == nil {
		p.out = append(p.out, registryRow{err: p.unknown()})
		return
	}
	if err := p.cur.finish(); err != nil {
		p.out = append(p.out, registryRow{err: err})
		return
	}
	if l := p.r.latest[p.k.base]; l != p.k {
		e := store.Entity{PartitionKey: p.pk, RowKey: p.rk, ETag: p.etag, Timestamp: p.ts}
		v, err := p.r.migrate(&e, p.k, p.cur.v, l)
		p.out = append(p.out, registryRow{v: v, err: err})
		return
	}
	p.out = append(p.out, registryRow{v: p.cur.v.Interface()})
}

// unknown is kindOf's error for an entity no registered kind claims.
func (p *registryPage) unknown() error {
	e := store.Entity{PartitionKey: p.pk, RowKey: p.rk}
	if p.r.prop != "" {
		e.Properties = map[string]any{}
		if p.markerSeen {
			e.Properties[p.r.prop] = p.marker
		}
	}
	_, err := p.r.kindOf(&e)
	return err
}

// start makes k the entity's kind: its reader takes the members read so
// far.
func (p *registryPage) start(k *kindType) error {
	rd := p.readers[k]
	if rd == nil {
		rd = newReader(k.c, reflect.New(k.typ).Elem())
		if p.readers == nil {
			p.readers = map[*kindType]*reader{}
		}
		p.readers[k] = rd
	} else {
		rd.reset()
	}
	p.k, p.cur = k, rd
	if err := rd.SetPartitionKey(p.pk); err != nil {
		return err
	}
	if err := rd.SetRowKey(p.rk); err != nil {
		return err
	}
	if p.hasTS {
		if err := rd.SetTimestamp(p.ts); err != nil {
			return err
		}
	}
	if p.hasETag {
		if err := rd.SetETag(p.etag); err != nil {
			return err
		}
	}
	for i := range p.tape {
		if err := p.tape[i].replay(rd); err != nil {
			return err
		}
	}
	p.tape = p.tape[:0]
	return nil
}

// replay hands m to r.
func (m *member) replay(r store.EntityReader) error {
	switch m.typ {
	case store.EdmString:
		return r.SetString(m.name, m.s)
	case store.EdmBinary:
		return r.SetBinary(m.name, m.b)
	case store.EdmBoolean:
		return r.SetBool(m.name, m.bool)
	case store.EdmInt32:
		return r.SetInt32(m.name, int32(m.n))
	case store.EdmInt64:
		return r.SetInt64(m.name, m.n)
	case store.EdmDouble:
		return r.SetDouble(m.name, m.f)
	case store.EdmDateTime:
		return r.SetTime(m.name, m.t)
	case store.EdmGuid:
		return r.SetGUID(m.name, m.g)
	}
	return fmt.Errorf("mapper: registry: recorded property %q has no type", m.name)
}

// value returns m's value as Entity.Properties would hold it.
func (m *member) value() any {
	switch m.typ {
	case store.EdmString:
		return m.s
	case store.EdmBinary:
		return m.b
	case store.EdmBoolean:
		return m.bool
	case store.EdmInt32:
		return int32(m.n)
	case store.EdmInt64:
		return m.n
	case store.EdmDouble:
		return m.f
	case store.EdmDateTime:
		return m.t
	case store.EdmGuid:
		return m.g
	}
	return nil
}

func (p *registryPage) SetPartitionKey(pk string) error {
	p.pk = pk
	return nil
}

func (p *registryPage) SetRowKey(rk string) error {
	p.rk = rk
	if p.r.prop != "" {
		return nil
	}
	for _, k := range p.r.kinds {
		if strings.HasPrefix(rk, k.kind) {
			return p.start(k)
		}
	}
	p.unknownPrefix = true
	return nil
}

func (p *registryPage) SetTimestamp(t time.Time) error {
	if p.cur != nil {
		return p.cur.SetTimestamp(t)
	}
	p.ts, p.hasTS = t, true
	return nil
}

func (p *registryPage) SetETag(etag store.ETag) error {
	if p.cur != nil {
		return p.cur.SetETag(etag)
	}
	p.etag, p.hasETag = etag, true
	return nil
}

// property takes a property that came before the kind was known: the
// discriminator names the kind (and the members so far are replayed into
// its reader); any other is recorded.
func (p *registryPage) property(m member) error {
	if p.unknownPrefix {
		return nil
	}
	if m.name == p.r.prop {
		p.marker, p.markerSeen = m.value(), true
		if m.typ == store.EdmString {
			if k := p.r.byKind[m.s]; k != nil {
				if err := p.start(k); err != nil {
					return err
				}
				return m.replay(p.cur)
			}
		}
	}
	m.name = strings.Clone(m.name)
	p.tape = append(p.tape, m)
	return nil
}

// The setters hand a property straight to the kind's reader once the kind
// is known.

func (p *registryPage) SetString(name, v string) error {
	if p.cur != nil {
		return p.cur.SetString(name, v)
	}
	return p.property(member{name: name, typ: store.EdmString, s: v})
}

func (p *registryPage) SetBinary(name string, v []byte) error {
	if p.cur != nil {
		return p.cur.SetBinary(name, v)
	}
	return p.property(member{name: name, typ: store.EdmBinary, b: v})
}

func (p *registryPage) SetBool(name string, v bool) error {
	if p.cur != nil {
		return p.cur.SetBool(name, v)
	}
	return p.property(member{name: name, typ: store.EdmBoolean, bool: v})
}

func (p *registryPage) SetInt32(name string, v int32) error {
	if p.cur != nil {
		return p.cur.SetInt32(name, v)
	}
	return p.property(member{name: name, typ: store.EdmInt32, n: int64(v)})
}

func (p *registryPage) SetInt64(name string, v int64) error {
	if p.cur != nil {
		return p.cur.SetInt64(name, v)
	}
	return p.property(member{name: name, typ: store.EdmInt64, n: v})
}

func (p *registryPage) SetDouble(name string, v float64) error {
	if p.cur != nil {
		return p.cur.SetDouble(name, v)
	}
	return p.property(member{name: name, typ: store.EdmDouble, f: v})
}

func (p *registryPage) SetTime(name string, v time.Time) error {
	if p.cur != nil {
		return p.cur.SetTime(name, v)
	}
	return p.property(member{name: name, typ: store.EdmDateTime, t: v})
}

func (p *registryPage) SetGUID(name string, v store.GUID) error {
	if p.cur != nil {
		return p.cur.SetGUID(name, v)
	}
	return p.property(member{name: name, typ: store.EdmGuid, g: v})
}

// queryTyped reads the pages of q into values of the registered types.
func (r *Registry) queryTyped(ctx context.Context, tbl store.TypedTable, q store.Query, yield func(any, error) bool) {
	p := &registryPage{r: r}
	for {
		p.out = p.out[:0]
		cont, _, err := tbl.QueryInto(ctx, q, p.next)
		if err != nil {
			p.open = false // the page's entities belong to no page
			yield(nil, err)
			return
		}
		p.flush()
		for _, row := range p.out {
			if !yield(row.v, row.err) {
				return
			}
		}
		if cont == "" {
			return
		}
		q.Continuation = cont
	}
}
