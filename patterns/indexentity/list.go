package indexentity

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
)

// Key names one entity a list holds. It is store.Key, tablekit's one
// key-pair type.
type Key = store.Key

// entry is one id of a list. version is the source version the entry was
// written from (0 in a SamePartition list, which changes atomically with
// its entities and needs none).
type entry struct {
	Key
	version int64
}

// less orders entries the way the service orders keys.
func (a entry) less(b entry) int {
	if c := keys.Compare(a.PartitionKey, b.PartitionKey); c != 0 {
		return c
	}
	return keys.Compare(a.RowKey, b.RowKey)
}

// hashOf places an id in a list's hash space: FNV-1a 64 over the
// PartitionKey, a NUL (no key can hold one) and the RowKey. It decides
// which index entity of a list holds the id, so it must never change.
func hashOf(k Key) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k.PartitionKey))
	h.Write([]byte{0})
	h.Write([]byte(k.RowKey))
	return h.Sum64()
}

// maxBound is the upper bound of the last segment of a list.
const maxBound = ^uint64(0)

// boundKey formats a segment's upper bound as the end of its RowKey: 16
// upper-case hex digits, which sort in numeric order.
func boundKey(b uint64) string { return fmt.Sprintf("%016X", b) }

// parseBound reads boundKey's output back.
func parseBound(s string) (uint64, bool) {
	if len(s) != 16 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'F') {
			return 0, false
		}
	}
	b, err := strconv.ParseUint(s, 16, 64)
	return b, err == nil
}

// A list is stored as text, one entry a line: in a SamePartition list the
// RowKey alone (the partition is the list's own); elsewhere the version,
// the PartitionKey and the RowKey separated by tabs. No key can hold a
// control character, so a tab or a line feed never needs escaping.

// appendLine appends e's line.
func appendLine(b []byte, e entry, withPK bool) []byte {
	if !withPK {
		return append(b, e.RowKey...)
	}
	b = strconv.AppendInt(b, e.version, 10)
	b = append(b, '\t')
	b = append(b, e.PartitionKey...)
	b = append(b, '\t')
	return append(b, e.RowKey...)
}

// parseLine reads a line; pk is the list's partition for a line without
// one. It checks the line's shape, not every key rule: the lines are the
// package's own.
func parseLine(line, pk string, withPK bool) (entry, error) {
	if !withPK {
		if strings.IndexByte(line, '\t') >= 0 {
			return entry{}, fmt.Errorf("line %.80q is not a RowKey", line)
		}
		return entry{Key: Key{PartitionKey: pk, RowKey: line}}, nil
	}
	v, rest, ok1 := strings.Cut(line, "\t")
	p, r, ok2 := strings.Cut(rest, "\t")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok1 || !ok2 || err != nil || n < 0 || strings.IndexByte(r, '\t') >= 0 {
		return entry{}, fmt.Errorf("line %.80q is not version, PartitionKey and RowKey", line)
	}
	return entry{Key: Key{PartitionKey: p, RowKey: r}, version: n}, nil
}

// Layout shapes the index entities a list is stored in. The zero value
// gives the defaults.
type Layout struct {
	// ChunkBytes caps one index entity by the service's size formula
	// (store.EntitySize), at most store.MaxEntitySize; a list that would
	// pass it spreads over more index entities. Every change of a list
	// rewrites the entity that holds the id, so smaller entities make
	// cheaper writes and larger ones fewer reads per lookup. Default
	// DefaultChunkBytes.
	ChunkBytes int
	// PropertyUnits caps one property of an index entity, in UTF-16 code
	// units, at most store.MaxStringUnits (the default); a property holds
	// at least one id whatever the cap.
	PropertyUnits int
}

// DefaultChunkBytes is the default Layout.ChunkBytes: 128 KiB, a few
// thousand ids. It keeps a SamePartition transaction (the entity and the
// index entities of its old and new values) well under the 4 MiB body
// limit.
const DefaultChunkBytes = 128 * 1024

// minChunkBytes leaves room for the longest entry and the keys.
const minChunkBytes = 16 * 1024

func (l Layout) resolve() (Layout, error) {
	if l.ChunkBytes == 0 {
		l.ChunkBytes = DefaultChunkBytes
	}
	if l.PropertyUnits == 0 {
		l.PropertyUnits = store.MaxStringUnits
	}
	if l.ChunkBytes < minChunkBytes || l.ChunkBytes > store.MaxEntitySize {
		return l, refuse("Layout.ChunkBytes %d is out of range: it must be %d to %d (store.MaxEntitySize)", l.ChunkBytes, minChunkBytes, store.MaxEntitySize)
	}
	if l.PropertyUnits < 1 || l.PropertyUnits > store.MaxStringUnits {
		return l, refuse("Layout.PropertyUnits %d is out of range: it must be 1 to %d (store.MaxStringUnits)", l.PropertyUnits, store.MaxStringUnits)
	}
	return l, nil
}

// Properties of an index entity.
const (
	// countProp holds the number of ids (Int32), for people reading the
	// table.
	countProp = store.ReservedPrefix + "Count"
	// linePropPrefix starts the names of the properties holding the lines:
	// TkL000, TkL001, ... in order.
	linePropPrefix = store.ReservedPrefix + "L"
	// maxLineProps leaves the count its property.
	maxLineProps = store.MaxCustomProperties - 1
)

func lineProp(i int) string { return fmt.Sprintf("%s%03d", linePropPrefix, i) }

// segment is one stored piece of a list: an index entity holding the ids
// whose hash is at most bound (and above the previous segment's bound),
// or the list's blob.
type segment struct {
	bound   uint64
	etag    store.ETag // "" when it does not exist yet
	exists  bool
	entries []entry // sorted (entry.less)
}

// find returns the entry of k.
func (s *segment) find(k Key) (entry, bool) {
	i, ok := slices.BinarySearchFunc(s.entries, entry{Key: k}, entry.less)
	if !ok {
		return entry{}, false
	}
	return s.entries[i], true
}

// with returns the entries with e set (added or replaced).
func (s *segment) with(e entry) []entry {
	i, ok := slices.BinarySearchFunc(s.entries, e, entry.less)
	out := slices.Clone(s.entries)
	if ok {
		out[i] = e
		return out
	}
	return slices.Insert(out, i, e)
}

// without returns the entries without k.
func (s *segment) without(k Key) []entry {
	i, ok := slices.BinarySearchFunc(s.entries, entry{Key: k}, entry.less)
	out := slices.Clone(s.entries)
	if ok {
		out = slices.Delete(out, i, i+1)
	}
	return out
}

// encodeEntity builds the index entity of a segment, or reports that the
// entries do not fit the layout (and the service's limits).
func encodeEntity(pk, rk string, entries []entry, withPK bool, l Layout) (store.Entity, bool) {
	e, size, props := buildEntity(pk, rk, entries, withPK, l)
	return e, props <= maxLineProps && size <= l.ChunkBytes
}

// buildEntity builds the index entity of entries, whether or not it fits,
// and returns its size by the service's formula and its number of line
// properties.
func buildEntity(pk, rk string, entries []entry, withPK bool, l Layout) (e store.Entity, size, props int) {
	e = store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{countProp: int32(len(entries))}}
	var buf []byte
	units, lines := 0, 0
	flush := func() {
		e.Properties[lineProp(props)] = string(buf)
		props++
		buf, units, lines = buf[:0], 0, 0
	}
	for _, en := range entries {
		line := appendLine(nil, en, withPK)
		n := keys.UTF16Len(string(line))
		if lines > 0 && units+1+n > l.PropertyUnits {
			flush()
		}
		if lines > 0 {
			buf = append(buf, '\n')
			units++
		}
		buf = append(buf, line...)
		units += n
		lines++
	}
	if lines > 0 {
		flush()
	}
	return e, store.EntitySize(&e), props
}

// decodeEntity reads the entries of an index entity.
func decodeEntity(e store.Entity, withPK bool) ([]entry, error) {
	names := make([]string, 0, len(e.Properties))
	for name := range e.Properties {
		if strings.HasPrefix(name, linePropPrefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var out []entry
	for i, name := range names {
		if name != lineProp(i) {
			return nil, fmt.Errorf("property %s is out of sequence (want %s)", name, lineProp(i))
		}
		s, ok := e.Properties[name].(string)
		if !ok {
			return nil, fmt.Errorf("property %s is %T, not a string", name, e.Properties[name])
		}
		for line := range strings.SplitSeq(s, "\n") {
			en, err := parseLine(line, e.PartitionKey, withPK)
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", name, err)
			}
			out = append(out, en)
		}
	}
	return out, nil
}

// encodeText is a list as a blob holds it: one line per entry, each ended
// by a line feed.
func encodeText(entries []entry) []byte {
	var b []byte
	for _, e := range entries {
		b = appendLine(b, e, true)
		b = append(b, '\n')
	}
	return b
}

// decodeText reads a blob's list.
func decodeText(data []byte) ([]entry, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var out []entry
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		e, err := parseLine(line, "", true)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.SortFunc(out, entry.less)
	return out, nil
}

// piece is one index entity a segment's entries are packed into.
type piece struct {
	bound   uint64
	entries []entry
	entity  store.Entity
}

// pack places a segment's entries (sorted) into as few index entities as
// fit the layout: the segment's own (keyed by its bound) when they fit,
// otherwise k pieces of about equal count cut at hash boundaries, the last
// keeping the segment's bound. rkOf makes a piece's RowKey from its bound.
func pack(pk string, rkOf func(uint64) string, bound uint64, entries []entry, withPK bool, l Layout) ([]piece, error) {
	e, size, props := buildEntity(pk, rkOf(bound), entries, withPK, l)
	if props <= maxLineProps && size <= l.ChunkBytes {
		return []piece{{bound: bound, entries: entries, entity: e}}, nil
	}
	// Start from the fewest pieces the size and the property count allow.
	first := max(2, (size+l.ChunkBytes-1)/l.ChunkBytes, (props+maxLineProps-1)/maxLineProps)
	type hashed struct {
		h uint64
		e entry
	}
	hs := make([]hashed, len(entries))
	for i, e := range entries {
		hs[i] = hashed{hashOf(e.Key), e}
	}
	slices.SortFunc(hs, func(a, b hashed) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return a.e.less(b.e)
	})
	for k := first; k <= len(hs); k++ {
		var out []piece
		start := 0
		ok := true
		for i := 1; i <= k && ok; i++ {
			end := len(hs)
			b := bound
			if i < k {
				end = i * len(hs) / k
				// Never cut between equal hashes: move the cut forward.
				for end < len(hs) && end > start && hs[end].h == hs[end-1].h {
					end++
				}
				if end >= len(hs) || end <= start {
					ok = false
					break
				}
				b = hs[end-1].h
			}
			part := make([]entry, 0, end-start)
			for _, h := range hs[start:end] {
				part = append(part, h.e)
			}
			slices.SortFunc(part, entry.less)
			e, fits := encodeEntity(pk, rkOf(b), part, withPK, l)
			if !fits {
				ok = false
				break
			}
			out = append(out, piece{bound: b, entries: part, entity: e})
			start = end
		}
		if ok {
			return out, nil
		}
	}
	return nil, fmt.Errorf("indexentity: %d ids cannot be spread over index entities of %d bytes (too many share one hash)", len(entries), l.ChunkBytes)
}
