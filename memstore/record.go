package memstore

import (
	"encoding/binary"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// record is one stored entity in its packed form: a fixed header, the key
// and the properties in one exactly sized byte string. Stored records live
// in a table's arena, which holds no Go pointers per entity, so a table of
// a million entities costs the garbage collector almost nothing to scan; a
// record value is a view of those bytes and costs nothing to make. A
// record is never written after it is built: a write stores a new one.
// A nil record means "no entity".
//
// Layout: ts (8 bytes, service time in Unix nanoseconds: the ETag derives
// from it), total length, key length, PartitionKey length and property
// count (4 bytes each, little endian), then the ETag's text (etagLen
// bytes, formatted once when the record is built, so a read hands out a
// view of it instead of formatting it), then PartitionKey + "\x00" +
// RowKey (keys cannot hold NUL), then the properties (see appendProps).
type record []byte

const (
	recordHeader = 24
	// etagLen is the length of every ETag text: W/"datetime'...'" around
	// a timestamp of fixed width (write times are Unix nanoseconds, so
	// years have four digits).
	etagLen = 46
	// keyStart is where the keys begin.
	keyStart = recordHeader + etagLen
)

func newRecord(pk, rk string, ts int64, props map[string]any) record {
	size, n := propsSize(props)
	return appendProps(recordHead(pk, rk, ts, size, n), props)
}

// newPackedRecord is newRecord for properties a packer packed.
func newPackedRecord(pk, rk string, ts int64, p *packer) record {
	return append(recordHead(pk, rk, ts, len(p.b), p.n), p.b...)
}

// recordHead returns a record's header, ETag and keys in a slice with room
// for exactly size bytes of n properties.
func recordHead(pk, rk string, ts int64, size, n int) []byte {
	keyLen := len(pk) + 1 + len(rk)
	total := keyStart + keyLen + size
	data := make([]byte, recordHeader, total) // exactly sized
	binary.LittleEndian.PutUint64(data[0:], uint64(ts))
	binary.LittleEndian.PutUint32(data[8:], uint32(total))
	binary.LittleEndian.PutUint32(data[12:], uint32(keyLen))
	binary.LittleEndian.PutUint32(data[16:], uint32(len(pk)))
	binary.LittleEndian.PutUint32(data[20:], uint32(n))
	data = appendETag(data, ts)
	if len(data) != keyStart {
		panic("memstore: an ETag of unexpected length") // a write time outside 1678-2262
	}
	return append(append(append(data, pk...), 0), rk...)
}

func (r record) ts() int64   { return int64(binary.LittleEndian.Uint64(r[0:])) }
func (r record) keyLen() int { return int(binary.LittleEndian.Uint32(r[12:])) }
func (r record) pkLen() int  { return int(binary.LittleEndian.Uint32(r[16:])) }
func (r record) nprops() int { return int(binary.LittleEndian.Uint32(r[20:])) }
func (r record) key() string { return unsafeString(r[keyStart : keyStart+r.keyLen()]) }
func (r record) pk() string  { return unsafeString(r[keyStart : keyStart+r.pkLen()]) }
func (r record) rk() string {
	return unsafeString(r[keyStart+r.pkLen()+1 : keyStart+r.keyLen()])
}
func (r record) props() []byte { return r[keyStart+r.keyLen():] }
func recordLen(b []byte) int   { return int(binary.LittleEndian.Uint32(b[8:])) }

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

// propsSize returns the encoded size and the count of the non-nil properties.
func propsSize(props map[string]any) (size, count int) {
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
	return size, count
}

// appendProps appends the non-nil properties to b; values must be valid.
// Layout per property: uvarint name length, name, tag, value; strings and
// binaries carry a uvarint length, fixed-size values are little endian.
func appendProps(b []byte, props map[string]any) []byte {
	p := packer{b: b}
	for k, v := range props {
		switch x := v.(type) {
		case string:
			p.str(k, x)
		case []byte:
			p.bin(k, x)
		case bool:
			p.boolean(k, x)
		case int32:
			p.int32(k, x)
		case int64:
			p.int64(k, x)
		case float64:
			p.double(k, x)
		case time.Time:
			p.time(k, x)
		case store.GUID:
			p.guid(k, x)
		}
	}
	return p.b
}

// packer packs properties in a record's layout (see appendProps), from a
// map or as a store.PropertySource writes them (the typed lane: no map in
// between). n counts them.
type packer struct {
	b []byte
	n int
}

// head appends a property's name and tag.
func (p *packer) head(name string, tag byte) {
	p.b = binary.AppendUvarint(p.b, uint64(len(name)))
	p.b = append(append(p.b, name...), tag)
	p.n++
}

func (p *packer) str(name, v string) {
	p.head(name, tagString)
	p.b = append(binary.AppendUvarint(p.b, uint64(len(v))), v...)
}

func (p *packer) bin(name string, v []byte) {
	p.head(name, tagBinary)
	p.b = append(binary.AppendUvarint(p.b, uint64(len(v))), v...)
}

func (p *packer) boolean(name string, v bool) {
	p.head(name, tagBool)
	if v {
		p.b = append(p.b, 1)
	} else {
		p.b = append(p.b, 0)
	}
}

func (p *packer) int32(name string, v int32) {
	p.head(name, tagInt32)
	p.b = binary.LittleEndian.AppendUint32(p.b, uint32(v))
}

func (p *packer) int64(name string, v int64) {
	p.head(name, tagInt64)
	p.b = binary.LittleEndian.AppendUint64(p.b, uint64(v))
}

func (p *packer) double(name string, v float64) {
	p.head(name, tagDouble)
	p.b = binary.LittleEndian.AppendUint64(p.b, math.Float64bits(store.NormalizeDouble(v)))
}

func (p *packer) time(name string, v time.Time) {
	p.head(name, tagDateTime)
	p.b = binary.LittleEndian.AppendUint64(p.b, uint64(timeToTicks(store.NormalizeTime(v))))
}

func (p *packer) guid(name string, v store.GUID) {
	p.head(name, tagGUID)
	p.b = append(p.b, v[:]...)
}

// The store.PropertyWriter a source writes into (through store.WriteSource,
// which checks every rule first).

func (p *packer) String(n store.PropertyName, v string) error  { p.str(n.String(), v); return nil }
func (p *packer) Binary(n store.PropertyName, v []byte) error  { p.bin(n.String(), v); return nil }
func (p *packer) Bool(n store.PropertyName, v bool) error      { p.boolean(n.String(), v); return nil }
func (p *packer) Int32(n store.PropertyName, v int32) error    { p.int32(n.String(), v); return nil }
func (p *packer) Int64(n store.PropertyName, v int64) error    { p.int64(n.String(), v); return nil }
func (p *packer) Double(n store.PropertyName, v float64) error { p.double(n.String(), v); return nil }
func (p *packer) Time(n store.PropertyName, v time.Time) error { p.time(n.String(), v); return nil }
func (p *packer) GUID(n store.PropertyName, v store.GUID) error {
	p.guid(n.String(), v)
	return nil
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
func (r record) timestamp() time.Time { return time.Unix(0, r.ts()).UTC() }

// etag returns the record's ETag, formatted the way the service does (a
// weak tag holding the URL-escaped write time) when the record was built.
// Write times are unique per store, so every write yields a new ETag.
func (r record) etag() store.ETag { return store.ETag(unsafeString(r[recordHeader:keyStart])) }

// etagAt formats the ETag of a write at ts (Unix nanoseconds).
func etagAt(ts int64) store.ETag {
	var buf [etagLen]byte
	return store.ETag(appendETag(buf[:0], ts))
}

// appendETag appends the ETag text of a write at ts to b.
func appendETag(b []byte, ts int64) []byte {
	var tsBuf [40]byte
	b = append(b, `W/"datetime'`...)
	// wire.AppendTime writes the layout 2006-01-02T15:04:05.0000000Z
	// several times faster than time.Time.AppendFormat.
	for _, c := range wire.AppendTime(tsBuf[:0], time.Unix(0, ts).UTC()) {
		if c == ':' { // only ':' needs escaping in a timestamp
			b = append(b, "%3A"...)
		} else {
			b = append(b, c)
		}
	}
	return append(b, `'"`...)
}

// entity decodes the record; sel, when non-empty, projects its properties.
func (r record) entity(sel []string) store.Entity {
	e := store.Entity{PartitionKey: r.pk(), RowKey: r.rk(), Timestamp: r.timestamp(), ETag: r.etag()}
	if len(sel) == 0 {
		e.Properties = make(map[string]any, r.nprops())
		eachProp(r.props(), func(name string, tag byte, raw []byte) bool {
			e.Properties[name] = decodeValue(tag, raw)
			return true
		})
		return e
	}
	e.Properties = make(map[string]any, len(sel))
	eachProp(r.props(), func(name string, tag byte, raw []byte) bool {
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
func (r record) matchView(names []string, scratch map[string]any) store.Entity {
	e := store.Entity{PartitionKey: r.pk(), RowKey: r.rk(), Timestamp: r.timestamp()}
	if len(names) == 0 {
		return e
	}
	clear(scratch)
	eachProp(r.props(), func(name string, tag byte, raw []byte) bool {
		if _, ok := slices.BinarySearch(names, name); ok {
			scratch[name] = decodeValue(tag, raw)
		}
		return true
	})
	e.Properties = scratch
	return e
}

// merged returns the properties of r overlaid with update's non-nil ones.
func (r record) merged(update map[string]any) map[string]any {
	m := make(map[string]any, len(update)+r.nprops())
	eachProp(r.props(), func(name string, tag byte, raw []byte) bool {
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
