package wide

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// Limits of the layout.
const (
	// MaxRows is the most rows one value may take: every row is written by
	// one action of one entity group transaction.
	MaxRows = store.MaxBatchActions
	// MaxNameUnits is the longest property name a value may have, in
	// UTF-16 code units: the service's 255 less the 10 that the name of a
	// piece of a split value adds ("TkWide123_").
	MaxNameUnits = store.MaxPropertyNameUnits - len(propPrefix) - 4
	// History is how many recent writes the header remembers: a write
	// whose answer was lost is resolved exactly while fewer than History
	// other writes of the value land before the header is read back.
	History = 16
)

// maxPieces bounds the pieces one property is split into: the index in a
// piece's name has at most three digits.
const maxPieces = 1000

// The package's own properties. Their names start with propPrefix, and
// so with store.ReservedPrefix, which no property of a value may start
// with.
const (
	// propPrefix starts every property name the package uses itself:
	// the header's and parts' own properties, and the pieces of a split
	// value.
	propPrefix = store.ReservedPrefix + "Wide"
	// propVersion, on the header and on every part, is the number of
	// writes the value has had (deletes included); every part carries the
	// version of the write that wrote it, so a reader can tell that the
	// parts it read belong to the header it read.
	propVersion = propPrefix + "Version"
	// propRows, on the header only, is the number of rows of the value,
	// header included; 0 marks a deleted value. It is what makes a header
	// recognisable among the other rows of a partition.
	propRows = propPrefix + "Rows"
	// headPrefix names the properties the header keeps as the value's
	// head row (a partition.Head at the header's RowKey): propHeadVersion,
	// the number of commits on the head (the value's writes, and the
	// empty commits that shut a lost write out), and propWrites, the
	// request ids of the last History of them, newest first,
	// comma-separated (an Edm.Binary).
	headPrefix      = propPrefix + "Head"
	propHeadVersion = headPrefix + "Version"
	propWrites      = headPrefix + "Writers"
)

// headerSelect is the projection of a header read for a write.
var headerSelect = []string{propVersion, propRows, propHeadVersion, propWrites}

// rowKey is the RowKey of row i of value id: the compound key (id, i) with
// i zero-padded, so the rows sort in order right after one another, the
// header (row 0) first, and one range query reads them all.
func rowKey(id string, i int) (string, error) {
	d, err := keys.PadUint(uint64(i), 2)
	if err != nil {
		return "", err
	}
	return keys.Join(id, d)
}

// rowIndex reverses rowKey; ok is false for a key that is not one of the
// value's rows.
func rowIndex(id, rk string) (int, bool) {
	parts, err := keys.Split(rk)
	if err != nil || len(parts) != 2 || parts[0] != id {
		return 0, false
	}
	n, err := keys.ParseUint(parts[1], 2)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// pieceName is the property that holds piece k of property name:
// TkWide<k>_<name>.
func pieceName(name string, k int) string {
	return propPrefix + strconv.Itoa(k) + "_" + name
}

// parsePiece reverses pieceName; ok is false for any other name.
func parsePiece(prop string) (name string, k int, ok bool) {
	rest, found := strings.CutPrefix(prop, propPrefix)
	if !found {
		return "", 0, false
	}
	digits, name, found := strings.Cut(rest, "_")
	if !found || digits == "" || len(digits) > 3 || name == "" {
		return "", 0, false
	}
	k, err := strconv.Atoi(digits)
	if err != nil || k < 0 || strconv.Itoa(k) != digits {
		return "", 0, false
	}
	return name, k, true
}

// cell is one stored property of a row: a whole value, or a piece of one.
type cell struct {
	name string // the stored name
	v    any
	size int // its share of an entity by the service's size formula
	wire int // its share of the entity's JSON body (store.EstimateWireSize)
}

// propSize is one property's share of an entity by the service's size
// formula (store.EntitySize), and of its JSON body by the store's
// estimate (store.EstimateWireSize).
func propSize(name string, v any) (size, wire int) {
	e := store.Entity{Properties: map[string]any{name: v}}
	return store.EntitySize(&e) - emptySize, store.EstimateWireSize(&e) - emptyWire
}

var (
	emptySize = store.EntitySize(&store.Entity{})
	emptyWire = store.EstimateWireSize(&store.Entity{})
)

// cells turns a value's properties, in name order, into the cells the
// rows store: a string or binary value over its property limit becomes
// pieces of at most the limit (strings cut between characters), named
// pieceName(name, 0), pieceName(name, 1) and so on; everything else is
// stored whole under its own name.
func cells(names []string, props map[string]any) ([]cell, error) {
	out := make([]cell, 0, len(names))
	add := func(name string, v any) {
		size, wire := propSize(name, v)
		out = append(out, cell{name: name, v: v, size: size, wire: wire})
	}
	for _, name := range names {
		switch v := props[name].(type) {
		case string:
			if len(v) <= store.MaxStringUnits || store.UTF16Len(v) <= store.MaxStringUnits {
				add(name, v)
				continue
			}
			ps := splitString(v, store.MaxStringUnits)
			if len(ps) > maxPieces {
				return nil, tooManyPieces(name, len(ps))
			}
			for k, piece := range ps {
				add(pieceName(name, k), piece)
			}
		case []byte:
			if len(v) <= store.MaxBinaryBytes {
				add(name, v)
				continue
			}
			if n := (len(v) + store.MaxBinaryBytes - 1) / store.MaxBinaryBytes; n > maxPieces {
				return nil, tooManyPieces(name, n)
			}
			for k := 0; len(v) > 0; k++ {
				n := min(len(v), store.MaxBinaryBytes)
				add(pieceName(name, k), v[:n:n])
				v = v[n:]
			}
		default:
			add(name, v)
		}
	}
	return out, nil
}

func tooManyPieces(name string, n int) error {
	return refuse(store.CodeInvalidInput, 400, "property %q would be split into %d pieces: the limit is %d", name, n, maxPieces)
}

// splitString cuts s into pieces of at most max UTF-16 code units, never
// inside a character.
func splitString(s string, max int) []string {
	var out []string
	for len(s) > 0 {
		units, cut := 0, 0
		for cut < len(s) {
			r, n := utf8.DecodeRuneInString(s[cut:])
			u := 1
			if r >= 0x10000 {
				u = 2
			}
			if units+u > max {
				break
			}
			units += u
			cut += n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// layout is a value packed into rows.
type layout struct {
	rows [][]cell // rows[0] is the header's share
	size int      // the value's cells by the size formula
}

// pack places the cells into rows in order, starting a new row when the
// next cell would pass the service's limits for one entity: 252
// properties, and 1 MiB by the size formula, counting the keys and the
// package's own properties of each row (headerProps for the header,
// partProps for the others). A row's JSON body is held to 1 MiB too, by
// the store's estimate: Azurite refuses a replace or an upsert whose body
// passes 1 MiB (base64 makes binary values a third larger there, and
// escapes make non-ASCII text up to six times larger), and keeping to it
// costs a value only a few rows more. The order of the cells alone
// decides the layout.
func pack(pk, id string, cs []cell, headerProps, partProps map[string]any) layout {
	var l layout
	row, count, size, wire := -1, 0, 0, 0
	start := func() {
		row++
		rk, _ := rowKey(id, min(row, MaxRows-1)) // the length was checked for the last row
		own := partProps
		if row == 0 {
			own = headerProps
		}
		e := store.Entity{PartitionKey: pk, RowKey: rk, Properties: own}
		l.rows = append(l.rows, nil)
		count, size, wire = len(own), store.EntitySize(&e), store.EstimateWireSize(&e)
	}
	start()
	for _, c := range cs {
		if count+1 > store.MaxCustomProperties || size+c.size > store.MaxEntitySize || wire+c.wire > maxRowBody {
			start()
		}
		l.rows[row] = append(l.rows[row], c)
		count++
		size += c.size
		wire += c.wire
		l.size += c.size
	}
	return l
}

// maxRowBody bounds the JSON body of one row (see pack).
const maxRowBody = store.MaxEntitySize

// validName refuses a property name the layout cannot store.
func validName(name string) error {
	if store.ReservedProperty(name) {
		return refuse(store.CodePropertyNameInvalid, 400,
			"property name %q starts with %q (store.ReservedPrefix), which tablekit reserves for its own properties", name, store.ReservedPrefix)
	}
	if err := store.ValidatePropertyName(name); err != nil {
		return err
	}
	if n := store.UTF16Len(name); n > MaxNameUnits {
		return refuse(store.CodePropertyNameTooLong, 400,
			"property name %q is %d characters long: a wide value's names are limited to %d (the service's %d less the %d the name of a piece of a split value adds)",
			truncate(name), n, MaxNameUnits, store.MaxPropertyNameUnits, store.MaxPropertyNameUnits-MaxNameUnits)
	}
	return nil
}

// validValue refuses a value the service would refuse for any reason but
// its length, which splitting takes care of.
func validValue(name string, v any) error {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return refuse(store.CodeInvalidInput, 400, "property %q: string value is not valid UTF-8", name)
		}
		return nil
	case []byte:
		return nil
	}
	return store.ValidateValue(name, v)
}

// refuse builds the *store.Error of a check made before anything is sent.
func refuse(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, format, args...)
	e.Source = store.SourceClient
	return e
}

// truncate cuts a long name or key for a message.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", s[:cut], len(s))
}
