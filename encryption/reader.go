package encryption

import (
	"context"
	"crypto/cipher"
	"sync"
	"time"

	"github.com/tablekit/tablekit/store"
)

// decReader is the EntityReader an encrypting table hands a backend: it
// passes the keys and plain properties on to the caller's reader at once,
// keeps the metadata and every binary property (a ciphertext, maybe)
// aside, and in flush, once the entity is complete, decrypts and hands
// over what it kept. The metadata may come after the properties it
// decrypts in the backend's order, which is why nothing binary passes
// before the end.
type decReader struct {
	c     *Codec
	ctx   context.Context
	table string
	r     store.EntityReader

	pk, rk  string
	meta    string
	hasMeta bool
	leg1    string
	hasLeg1 bool
	leg2    []byte
	hasLeg2 bool
	bins    []binProp
	// plain is a configured property stored unencrypted.
	plain string
	// scratch kept from entity to entity
	m  metadata
	wk []byte // wrapped key
	ck []byte // cache key
	ad []byte
}

type binProp struct {
	name string
	v    []byte
}

// readers keeps decReaders and their scratch space between reads.
var readers = sync.Pool{New: func() any { return new(decReader) }}

// newReader returns a reader from the pool; release returns it.
func (c *Codec) newReader(ctx context.Context, table string, r store.EntityReader) *decReader {
	d := readers.Get().(*decReader)
	d.c, d.ctx, d.table, d.r = c, ctx, table, r
	return d
}

// release resets d, dropping every reference to the caller's data, and
// returns it to the pool; d must not be used after.
func (d *decReader) release() {
	d.reset()
	clear(d.m.Props[:cap(d.m.Props)])
	d.c, d.ctx, d.table, d.r = nil, nil, "", nil
	readers.Put(d)
}

func (d *decReader) reset() {
	clear(d.bins)
	*d = decReader{c: d.c, ctx: d.ctx, table: d.table, r: d.r, bins: d.bins[:0],
		m: metadata{Props: d.m.Props[:0]}, wk: d.wk[:0], ck: d.ck[:0], ad: d.ad[:0]}
}

func (d *decReader) SetPartitionKey(pk string) error { d.pk = pk; return d.r.SetPartitionKey(pk) }
func (d *decReader) SetRowKey(rk string) error       { d.rk = rk; return d.r.SetRowKey(rk) }
func (d *decReader) SetTimestamp(t time.Time) error  { return d.r.SetTimestamp(t) }
func (d *decReader) SetETag(e store.ETag) error      { return d.r.SetETag(e) }

// plainValue notes a configured property stored as a plain value.
func (d *decReader) plainValue(name string) bool {
	if d.c.encrypted(name) {
		if d.plain == "" {
			d.plain = d.c.ownName(name)
		}
		return true
	}
	return false
}

func (d *decReader) SetString(name, v string) error {
	switch name {
	case MetadataProperty:
		d.meta, d.hasMeta = v, true
		return nil
	case LegacyMetadataProperty:
		d.leg1, d.hasLeg1 = v, true
		return nil
	}
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetString(name, v)
}

func (d *decReader) SetBinary(name string, v []byte) error {
	if name == LegacyPropertiesProperty {
		d.leg2, d.hasLeg2 = v, true
		return nil
	}
	d.bins = append(d.bins, binProp{name: d.c.ownName(name), v: v})
	return nil
}

func (d *decReader) SetBool(name string, v bool) error {
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetBool(name, v)
}

func (d *decReader) SetInt32(name string, v int32) error {
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetInt32(name, v)
}

func (d *decReader) SetInt64(name string, v int64) error {
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetInt64(name, v)
}

func (d *decReader) SetDouble(name string, v float64) error {
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetDouble(name, v)
}

func (d *decReader) SetTime(name string, v time.Time) error {
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetTime(name, v)
}

func (d *decReader) SetGUID(name string, v store.GUID) error {
	if d.plainValue(name) {
		return nil
	}
	return d.r.SetGUID(name, v)
}

func (d *decReader) fail(prop, reason string, cause error) error {
	return &DecryptError{Table: d.table, PartitionKey: d.pk, RowKey: d.rk, Property: prop, Reason: reason, Err: cause}
}

// flush decrypts what the entity kept aside and hands it to the caller's
// reader; the reader is then ready for the next entity.
func (d *decReader) flush() error {
	defer d.reset()
	if d.plain != "" {
		return d.fail(d.plain, "the property is stored unencrypted, and the table is configured to encrypt it", nil)
	}
	switch {
	case d.hasMeta && (d.hasLeg1 || d.hasLeg2):
		return d.fail("", "the entity carries the metadata of both formats", nil)
	case d.hasMeta:
		return d.flushGCM()
	case d.hasLeg1 || d.hasLeg2:
		if !d.hasLeg1 || !d.hasLeg2 {
			return d.fail("", "the legacy format needs both "+LegacyMetadataProperty+" and "+LegacyPropertiesProperty, nil)
		}
		return d.flushLegacy()
	}
	for _, b := range d.bins {
		if d.c.encrypted(b.name) {
			return d.fail(b.name, "the metadata property "+MetadataProperty+" is missing", nil)
		}
	}
	return d.passBins()
}

func (d *decReader) passBins() error {
	for _, b := range d.bins {
		if err := d.r.SetBinary(b.name, b.v); err != nil {
			return err
		}
	}
	return nil
}

func (d *decReader) flushGCM() error {
	m := &d.m
	listed := func(name string) bool {
		if d.c.encrypted(name) {
			return true
		}
		for _, p := range m.Props {
			if p == name {
				return true
			}
		}
		return false
	}
	if err := m.parse(d.meta, d.wk); err != nil {
		return d.fail("", "metadata property "+MetadataProperty, err)
	}
	d.wk = m.WK[:0]
	need := false
	for _, b := range d.bins {
		if listed(b.name) {
			need = true
			break
		}
	}
	if !need {
		return d.passBins()
	}
	aead, err := d.contentKey()
	if err != nil {
		return err
	}
	for _, b := range d.bins {
		if !listed(b.name) {
			if err := d.r.SetBinary(b.name, b.v); err != nil {
				return err
			}
			continue
		}
		ct := b.v
		if len(ct) < 1+nonceSize+tagSize || ct[0] != cipherV1 {
			return d.fail(b.name, "the value is not a ciphertext of this format", nil)
		}
		d.ad = aad(d.ad[:0], d.table, d.pk, d.rk, b.name)
		pt, err := aead.Open(ct[1+nonceSize:1+nonceSize], ct[1:1+nonceSize], ct[1+nonceSize:], d.ad)
		if err != nil {
			return d.fail(b.name, "the ciphertext fails authentication (changed, moved from another row, table or property, or sealed under another key)", nil)
		}
		ok, err := readValue(d.r, b.name, pt)
		if !ok {
			return d.fail(b.name, "the decrypted value is malformed", nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// contentKey returns the cipher of the entity's content key: from the
// codec's cache, or unwrapped by the key the metadata names.
func (d *decReader) contentKey() (cipher.AEAD, error) {
	m := &d.m
	if d.c.cache != nil {
		d.ck = cacheKey(d.ck[:0], m.KeyID, m.Alg, m.WK)
		if aead := d.c.cache.get(d.ck); aead != nil {
			return aead, nil
		}
	}
	kw, err := d.c.keys.ResolveKey(d.ctx, m.KeyID)
	if err != nil {
		return nil, d.fail("", "no key to unwrap the content key", err)
	}
	cek, err := kw.UnwrapKey(d.ctx, m.WK, m.Alg, m.KeyID)
	if err != nil {
		return nil, d.fail("", "the content key does not unwrap", err)
	}
	if len(cek) != cekSize {
		clear(cek)
		return nil, d.fail("", "the content key has the wrong size", nil)
	}
	aead, err := newGCM(cek)
	clear(cek)
	if err != nil {
		return nil, d.fail("", "the content key", err)
	}
	if d.c.cache != nil {
		d.c.cache.put(d.ck, aead)
	}
	return aead, nil
}
