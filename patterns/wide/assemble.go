package wide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// header is what a value's header row says.
type header struct {
	exists  bool // the row exists (a deleted value keeps it)
	etag    store.ETag
	version int64
	rows    int      // rows of the value, header included; 0 when deleted
	writes  []string // ids of the last writes, newest first
}

// live reports whether the header holds a value (not deleted).
func (h *header) live() bool { return h.exists && h.rows > 0 }

// writerOf returns the id of the write that made version v, if the header
// still remembers it.
func (h *header) writerOf(v int64) (string, bool) {
	i := h.version - v
	if v < 1 || i < 0 || i >= int64(len(h.writes)) {
		return "", false
	}
	return h.writes[i], true
}

// parseHeader reads the package's properties of a header row.
func parseHeader(e *store.Entity) (header, error) {
	h := header{exists: true, etag: e.ETag}
	v, ok := e.Properties[propVersion].(int64)
	if !ok || v < 1 {
		return h, corrupt(e, "property %s is %v (%T), want an Int64 of 1 or more", propVersion, e.Properties[propVersion], e.Properties[propVersion])
	}
	n, ok := e.Properties[propRows].(int32)
	if !ok || n < 0 || n > MaxRows {
		return h, corrupt(e, "property %s is %v (%T), want an Int32 of 0 to %d", propRows, e.Properties[propRows], e.Properties[propRows], MaxRows)
	}
	w, _ := e.Properties[propWrites].(string)
	writes := strings.Fields(w)
	if len(writes) == 0 || len(writes) > History || int64(len(writes)) > v {
		return h, corrupt(e, "property %s lists %d writes for version %d", propWrites, len(writes), v)
	}
	h.version, h.rows, h.writes = v, int(n), writes
	return h, nil
}

// assembled is a value read back: its header and its properties.
type assembled struct {
	h     header
	props map[string]any
}

// assemble puts a value together from the rows of one read, in RowKey
// order. torn is "" when the rows are one version of the value, and
// otherwise says why they are not (a write landed between the pages of
// the read); found is false for a value that does not exist or was
// deleted.
func assemble(id string, rows []store.Entity) (a assembled, found bool, torn string, err error) {
	if len(rows) == 0 {
		return a, false, "", nil
	}
	head := &rows[0]
	i, ok := rowIndex(id, head.RowKey)
	if !ok {
		return a, false, "", corrupt(head, "the row is in the key range of value %q but is not one of its rows", id)
	}
	if i != 0 {
		return a, false, fmt.Sprintf("row %d came without the header (row 0): the value was created during the read", i), nil
	}
	if a.h, err = parseHeader(head); err != nil {
		return a, false, "", err
	}
	if !a.h.live() {
		return a, false, "", nil
	}
	parts := make([]*store.Entity, a.h.rows)
	parts[0] = head
	for j := 1; j < len(rows); j++ {
		e := &rows[j]
		i, ok := rowIndex(id, e.RowKey)
		if !ok {
			return a, false, "", corrupt(e, "the row is in the key range of value %q but is not one of its rows", id)
		}
		if i >= a.h.rows {
			continue // a row of a later, longer version read after the header
		}
		v, ok := e.Properties[propVersion].(int64)
		if !ok {
			return a, false, "", corrupt(e, "property %s is %T, want an Int64", propVersion, e.Properties[propVersion])
		}
		if v != a.h.version {
			return a, false, fmt.Sprintf("the header is at version %d and row %d, read later, at version %d", a.h.version, i, v), nil
		}
		parts[i] = e
	}
	for i, p := range parts {
		if p == nil {
			return a, false, fmt.Sprintf("the header of version %d names %d rows and row %d was not read", a.h.version, a.h.rows, i), nil
		}
	}
	a.props, err = join(parts)
	return a, err == nil, "", err
}

// join gathers the properties of a value's rows, putting split values
// back together. The rows were read for this call alone, so the header's
// property map becomes the value's: the other rows' properties join it
// and the package's own leave it, which spares copying the largest part
// of the value again.
func join(parts []*store.Entity) (map[string]any, error) {
	props := parts[0].Properties
	if props == nil {
		props = map[string]any{}
	}
	var split map[string][]piece
	var where map[string]*store.Entity
	collect := func(p *store.Entity, name string, v any) error {
		base, k, ok := parsePiece(name)
		if !ok {
			switch name {
			case propVersion, propRows, propWrites:
				return nil
			}
			return corrupt(p, "property %s is not one the package writes", name)
		}
		if split == nil {
			split, where = map[string][]piece{}, map[string]*store.Entity{}
		}
		split[base] = append(split[base], piece{k, v})
		where[base] = p
		return nil
	}
	var own []string // the header's reserved properties, removed below
	for name, v := range props {
		if strings.HasPrefix(name, ReservedPrefix) {
			own = append(own, name)
			if v != nil {
				if err := collect(parts[0], name, v); err != nil {
					return nil, err
				}
			}
		} else if v == nil {
			own = append(own, name)
		}
	}
	for _, name := range own {
		delete(props, name)
	}
	for _, p := range parts[1:] {
		for name, v := range p.Properties {
			switch {
			case v == nil:
			case strings.HasPrefix(name, ReservedPrefix):
				if err := collect(p, name, v); err != nil {
					return nil, err
				}
			default:
				n := len(props)
				if props[name] = v; len(props) == n {
					return nil, corrupt(p, "property %s is stored in two rows", name)
				}
			}
		}
	}
	for name, ps := range split {
		if _, dup := props[name]; dup {
			return nil, corrupt(where[name], "property %s is stored both whole and in pieces", name)
		}
		v, err := glue(name, ps)
		if err != nil {
			return nil, corrupt(where[name], "%v", err)
		}
		props[name] = v
	}
	return props, nil
}

// piece is piece k of a split value.
type piece struct {
	k int
	v any
}

// glue puts the pieces of property name back together, in order.
func glue(name string, ps []piece) (any, error) {
	slices.SortFunc(ps, func(a, b piece) int { return a.k - b.k })
	_, isString := ps[0].v.(string)
	size := 0
	for i, p := range ps {
		if p.k != i {
			return nil, fmt.Errorf("piece %d of property %s is missing", i, name)
		}
		switch x := p.v.(type) {
		case string:
			size += len(x)
		case []byte:
			size += len(x)
		default:
			return nil, fmt.Errorf("piece %d of property %s is a %T", i, name, x)
		}
		if _, s := p.v.(string); s != isString {
			return nil, fmt.Errorf("the pieces of property %s mix types", name)
		}
	}
	if isString {
		var sb strings.Builder
		sb.Grow(size)
		for _, p := range ps {
			sb.WriteString(p.v.(string))
		}
		return sb.String(), nil
	}
	b := make([]byte, 0, size)
	for _, p := range ps {
		b = append(b, p.v.([]byte)...)
	}
	return b, nil
}
