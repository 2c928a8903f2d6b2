package memstore

import (
	"encoding/binary"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit/store"
)

// record is one stored entity. Its properties live in one immutable byte
// slice in a compact binary form, so an entity of n bytes of properties
// costs little more than n bytes, and a read decodes it straight into a
// fresh Properties map. A write never changes a record: it stores a new one.
type record struct {
	key    string // PartitionKey + "\x00" + RowKey; keys cannot hold NUL
	pkLen  int32
	nprops int32
	ts     int64  // service time in Unix nanoseconds; the ETag derives from it
	props  []byte // encoded properties, see encodeProps; never written after creation
}

// joinKey builds a record's key. The index map and the record share it.
func joinKey(pk, rk string) string { return pk + "\x00" + rk }

func newRecord(pk, rk string, ts int64, props map[string]any) *record {
	b, n := encodeProps(props)
	return &record{key: joinKey(pk, rk), pkLen: int32(len(pk)), nprops: int32(n), ts: ts, props: b}
}

func (r *record) pk() string { return r.key[:r.pkLen] }
func (r *record) rk() string { return r.key[r.pkLen+1:] }

// Property type tags in the compact encoding.
const (
	tagString byte = iota + 1
	tagBinary
	tagBool
	tagInt32
	tagInt64
	tagDouble
	tagDateTime
	tagGUID
)

// ticksAtUnixEpoch is the number of 100 ns ticks from 0001-01-01 to 1970-01-01.
const ticksAtUnixEpoch = 621355968000000000

func timeToTicks(t time.Time) int64 {
	return ticksAtUnixEpoch + t.Unix()*10_000_000 + int64(t.Nanosecond())/100
}

func ticksToTime(ticks int64) time.Time {
	d := ticks - ticksAtUnixEpoch
	sec, rem := d/10_000_000, d%10_000_000
	if rem < 0 {
		sec--
		rem += 10_000_000
	}
	return time.Unix(sec, rem*100).UTC()
}

// encodeProps encodes the non-nil properties; values must be valid.
// Layout per property: uvarint name length, name, tag, value; strings and
// binaries carry a uvarint length, fixed-size values are little endian.
func encodeProps(props map[string]any) ([]byte, int) {
	size, count := 0, 0
	for k, v := range props {
		if v == nil {
			continue
		}
		count++
		size += uvarintLen(len(k)) + len(k) + 1
		switch x := v.(type) {
		case string:
			size += uvarintLen(len(x)) + len(x)
		case []byte:
			size += uvarintLen(len(x)) + len(x)
		case bool:
			size++
		case int32:
			size += 4
		case int64, float64, time.Time:
			size += 8
		case store.GUID:
			size += 16
		}
	}
	// Exactly sized: a record's bytes are most of its memory.
	b := make([]byte, 0, size)
	for k, v := range props {
		if v == nil {
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		switch x := v.(type) {
		case string:
			b = append(b, tagString)
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case []byte:
			b = append(b, tagBinary)
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case bool:
			v := byte(0)
			if x {
				v = 1
			}
			b = append(b, tagBool, v)
		case int32:
			b = append(b, tagInt32)
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		case int64:
			b = append(b, tagInt64)
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		case float64:
			b = append(b, tagDouble)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(store.NormalizeDouble(x)))
		case time.Time:
			b = append(b, tagDateTime)
			b = binary.LittleEndian.AppendUint64(b, uint64(timeToTicks(store.NormalizeTime(x))))
		case store.GUID:
			b = append(b, tagGUID)
			b = append(b, x[:]...)
		}
	}
	return b, count
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}

// unsafeString views b as a string without copying. Only for the immutable
// bytes of a record: they are never written after encodeProps returns.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// eachProp calls fn for every encoded property with its name, tag and raw
// value bytes.
func eachProp(b []byte, fn func(name string, tag byte, raw []byte) bool) {
	for len(b) > 0 {
		n, w := binary.Uvarint(b)
		b = b[w:]
		name := unsafeString(b[:n])
		b = b[n:]
		tag := b[0]
		b = b[1:]
		var raw []byte
		switch tag {
		case tagString, tagBinary:
			l, w := binary.Uvarint(b)
			raw = b[w : w+int(l)]
			b = b[w+int(l):]
		case tagBool:
			raw, b = b[:1], b[1:]
		case tagInt32:
			raw, b = b[:4], b[4:]
		case tagInt64, tagDouble, tagDateTime:
			raw, b = b[:8], b[8:]
		case tagGUID:
			raw, b = b[:16], b[16:]
		}
		if !fn(name, tag, raw) {
			return
		}
	}
}

// decodeValue turns raw bytes back into the property's Go value. Strings
// share the record's immutable bytes; binaries are copied because callers
// may write to them.
func decodeValue(tag byte, raw []byte) any {
	switch tag {
	case tagString:
		return unsafeString(raw)
	case tagBinary:
		return append(make([]byte, 0, len(raw)), raw...)
	case tagBool:
		return raw[0] == 1
	case tagInt32:
		return int32(binary.LittleEndian.Uint32(raw))
	case tagInt64:
		return int64(binary.LittleEndian.Uint64(raw))
	case tagDouble:
		return math.Float64frombits(binary.LittleEndian.Uint64(raw))
	case tagDateTime:
		return ticksToTime(int64(binary.LittleEndian.Uint64(raw)))
	case tagGUID:
		var g store.GUID
		copy(g[:], raw)
		return g
	}
	return nil
}

// timestamp returns the record's Timestamp.
func (r *record) timestamp() time.Time { return time.Unix(0, r.ts).UTC() }

// etag formats the record's ETag the way the service does: a weak tag
// holding the URL-escaped write time. Write times are unique per store, so
// every write yields a new ETag.
func (r *record) etag() store.ETag {
	var buf, tsBuf [64]byte
	b := append(buf[:0], `W/"datetime'`...)
	ts := r.timestamp().AppendFormat(tsBuf[:0], "2006-01-02T15:04:05.0000000Z")
	for _, c := range ts { // only ':' needs escaping in a timestamp
		if c == ':' {
			b = append(b, "%3A"...)
		} else {
			b = append(b, c)
		}
	}
	return store.ETag(append(b, `'"`...))
}

// entity decodes the record; sel, when non-empty, projects its properties.
func (r *record) entity(sel []string) store.Entity {
	e := store.Entity{PartitionKey: r.pk(), RowKey: r.rk(), Timestamp: r.timestamp(), ETag: r.etag()}
	if len(sel) == 0 {
		e.Properties = make(map[string]any, r.nprops)
		eachProp(r.props, func(name string, tag byte, raw []byte) bool {
			e.Properties[name] = decodeValue(tag, raw)
			return true
		})
		return e
	}
	e.Properties = make(map[string]any, len(sel))
	eachProp(r.props, func(name string, tag byte, raw []byte) bool {
		for _, s := range sel {
			if s == name {
				e.Properties[name] = decodeValue(tag, raw)
				break
			}
		}
		return true
	})
	return e
}

// matchView returns the record's keys and Timestamp with only the named
// properties, decoded into scratch (cleared first), for evaluating a
// filter. The view is valid until scratch is reused.
func (r *record) matchView(names []string, scratch map[string]any) store.Entity {
	e := store.Entity{PartitionKey: r.pk(), RowKey: r.rk(), Timestamp: r.timestamp()}
	if len(names) == 0 {
		return e
	}
	clear(scratch)
	eachProp(r.props, func(name string, tag byte, raw []byte) bool {
		if _, ok := slices.BinarySearch(names, name); ok {
			scratch[name] = decodeValue(tag, raw)
		}
		return true
	})
	e.Properties = scratch
	return e
}

// merged returns the properties of r overlaid with update's non-nil ones.
func (r *record) merged(update map[string]any) map[string]any {
	m := make(map[string]any, len(update)+int(r.nprops))
	eachProp(r.props, func(name string, tag byte, raw []byte) bool {
		m[name] = decodeValue(tag, raw)
		return true
	})
	for k, v := range update {
		if v != nil {
			m[k] = v
		}
	}
	return m
}
