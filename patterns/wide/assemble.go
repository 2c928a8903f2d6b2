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
	version int64 // the value's writes (deletes included); 0 for a head that only shut a lost write out
	rows    int   // rows of the value, header included; 0 when deleted
}

// live reports whether the header holds a value (not deleted).
func (h *header) live() bool { return h.exists && h.rows > 0 }

// parseHeader reads the package's properties of a header row.
func parseHeader(e *store.Entity) (header, error) {
	r := rowOf(e)
	return r.header()
}

// header reads the package's properties of r, a header row.
func (r *row) header() (header, error) {
	h := header{exists: true, etag: r.etag}
	if r.version == nil && r.rows == nil && r.writes != nil {
		// The head of a value that never existed, moved past a lost write
		// that created it: no value.
		return h, nil
	}
	v, ok := r.version.(int64)
	if !ok || v < 1 {
		return h, r.corrupt("property %s is %v (%T), want an Int64 of 1 or more", propVersion, r.version, r.version)
	}
	n, ok := r.rows.(int32)
	if !ok || n < 0 || n > MaxRows {
		return h, r.corrupt("property %s is %v (%T), want an Int32 of 0 to %d", propRows, r.rows, r.rows, MaxRows)
	}
	if w, ok := r.writes.([]byte); !ok || len(w) == 0 {
		return h, r.corrupt("property %s is %T, want a non-empty Binary", propWrites, r.writes)
	}
	h.version, h.rows = v, int(n)
	return h, nil
}

// row is one row of a value as a read returned it: its keys and ETag, its
// properties with a value (the package's own included) in the order they
// came, and the package's own properties picked out (nil when absent).
type row struct {
	pk, rk                string
	etag                  store.ETag
	props                 []prop
	version, rows, writes any
}

// prop is one property of a row.
type prop struct {
	name string
	v    any
}

// rowOf turns an entity into a row.
func rowOf(e *store.Entity) row {
	r := row{pk: e.PartitionKey, rk: e.RowKey, etag: e.ETag, props: make([]prop, 0, len(e.Properties))}
	for name, v := range e.Properties {
		if v != nil {
			r.props = append(r.props, prop{name, v})
			r.own(name, v)
		}
	}
	return r
}

// own picks out property name when it is one of the package's own.
func (r *row) own(name string, v any) {
	switch name {
	case propVersion:
		r.version = v
	case propRows:
		r.rows = v
	case propWrites:
		r.writes = v
	case propHeadVersion:
	}
}

// corrupt is the error about r, a row the package did not write as it is.
func (r *row) corrupt(format string, args ...any) error {
	return corrupt(&store.Entity{PartitionKey: r.pk, RowKey: r.rk}, format, args...)
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
func assemble(id string, rows []row) (a assembled, found bool, torn string, err error) {
	if len(rows) == 0 {
		return a, false, "", nil
	}
	head := &rows[0]
	i, ok := rowIndex(id, head.rk)
	if !ok {
		return a, false, "", head.corrupt("the row is in the key range of value %q but is not one of its rows", id)
	}
	if i != 0 {
		return a, false, fmt.Sprintf("row %d came without the header (row 0): the value was created during the read", i), nil
	}
	if a.h, err = head.header(); err != nil {
		return a, false, "", err
	}
	if !a.h.live() {
		return a, false, "", nil
	}
	parts := make([]*row, a.h.rows)
	parts[0] = head
	for j := 1; j < len(rows); j++ {
		r := &rows[j]
		i, ok := rowIndex(id, r.rk)
		if !ok {
			return a, false, "", r.corrupt("the row is in the key range of value %q but is not one of its rows", id)
		}
		if i >= a.h.rows {
			continue // a row of a later, longer version read after the header
		}
		v, ok := r.version.(int64)
		if !ok {
			return a, false, "", r.corrupt("property %s is %T, want an Int64", propVersion, r.version)
		}
		if v != a.h.version {
			return a, false, fmt.Sprintf("the header is at version %d and row %d, read later, at version %d", a.h.version, i, v), nil
		}
		parts[i] = r
	}
	for i, p := range parts {
		if p == nil {
			return a, false, fmt.Sprintf("the header of version %d names %d rows and row %d was not read", a.h.version, a.h.rows, i), nil
		}
	}
	a.props, err = join(parts)
	return a, err == nil, "", err
}

// join gathers the properties of a value's rows into one map, sized for
// all of them at once, putting split values back together and leaving
// out the package's own properties.
func join(parts []*row) (map[string]any, error) {
	n := 0
	for _, p := range parts {
		n += len(p.props)
	}
	props := make(map[string]any, n)
	var split map[string][]piece
	var where map[string]*row
	for _, p := range parts {
		for _, pr := range p.props {
			if !strings.HasPrefix(pr.name, propPrefix) {
				n := len(props)
				if props[pr.name] = pr.v; len(props) == n {
					return nil, p.corrupt("property %s is stored in two rows", pr.name)
				}
				continue
			}
			base, k, ok := parsePiece(pr.name)
			if !ok {
				switch pr.name {
				case propVersion, propRows, propHeadVersion, propWrites:
					continue
				}
				return nil, p.corrupt("property %s is not one the package writes", pr.name)
			}
			if split == nil {
				split, where = map[string][]piece{}, map[string]*row{}
			}
			split[base] = append(split[base], piece{k, pr.v})
			where[base] = p
		}
	}
	for name, ps := range split {
		if _, dup := props[name]; dup {
			return nil, where[name].corrupt("property %s is stored both whole and in pieces", name)
		}
		v, err := glue(name, ps)
		if err != nil {
			return nil, where[name].corrupt("%v", err)
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
