package encryption

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Config chooses what a Codec or an encrypting table encrypts and with
// which keys.
type Config struct {
	// Key wraps the content key of every entity written. It is required
	// to write an encrypted property; a Codec without it only reads.
	Key KeyWrapper
	// Keys finds the key that wrapped a stored content key, by its id.
	// Nil means Key alone. During a key rotation it holds the old keys
	// and the new one (a Keyring).
	Keys KeyResolver
	// Properties are the names of the properties to encrypt. Every EDM
	// type can be encrypted in the authenticated format; only strings in
	// the legacy one. An encrypted property cannot be queried on.
	Properties []string
	// Legacy writes the WindowsAzure.Storage table encryption format 1.0
	// (AES-CBC-256, see legacy.go) instead of the authenticated format,
	// for readers that understand only that format. Its ciphertexts
	// carry no authentication: CVE-2022-30187 showed that a party able to
	// change stored data can recover plaintext from such readers through
	// their padding errors, and a value can be changed or moved between
	// rows undetected. Leave it off unless a legacy reader needs the
	// data; reading the legacy format needs no option.
	Legacy bool
	// Rand is the source of content keys, IVs and nonces; nil means
	// crypto/rand.
	Rand io.Reader
	// KeyCacheSize is the number of unwrapped content keys of the
	// authenticated format a Codec keeps, by key id and wrapped key, so
	// that reading an entity again needs no unwrap (with Key Vault, no
	// request) and no AES key schedule: 0 means DefaultKeyCacheSize,
	// a negative number none. The cache holds the plaintext content keys
	// (their AES key schedules) in the process's memory, each about 1 KB
	// with its key, until evicted by newer ones or Codec.ClearKeyCache;
	// a content key encrypts one entity version, so a cached key exposes
	// only what the process has already read.
	KeyCacheSize int
}

// Codec encrypts and decrypts the chosen properties of entities. It is
// what an encrypting table (NewTable) runs on every write and read; use
// it directly to encrypt store.Entity values written some other way. It
// is safe for concurrent use.
type Codec struct {
	key    KeyWrapper
	keys   KeyResolver
	props  []string // sorted, each once
	set    map[string]struct{}
	legacy bool
	rand   io.Reader
	cache  *keyCache // nil: none
}

var (
	metaName    = mustName(MetadataProperty)
	legacy1Name = mustName(LegacyMetadataProperty)
	legacy2Name = mustName(LegacyPropertiesProperty)
)

func mustName(s string) store.PropertyName {
	n, err := store.NewPropertyName(s)
	if err != nil {
		panic(err)
	}
	return n
}

// reserved reports the names the formats keep for their metadata.
func reserved(name string) bool {
	return name == MetadataProperty || name == LegacyMetadataProperty || name == LegacyPropertiesProperty
}

// NewCodec checks cfg and returns its Codec.
func NewCodec(cfg Config) (*Codec, error) {
	c := &Codec{key: cfg.Key, keys: cfg.Keys, legacy: cfg.Legacy, rand: cfg.Rand}
	if c.keys == nil {
		if c.key == nil {
			return nil, errors.New("encryption: Config needs a Key or Keys")
		}
		c.keys = single{c.key}
	}
	if c.rand == nil {
		c.rand = rand.Reader
	}
	switch n := cfg.KeyCacheSize; {
	case n == 0:
		c.cache = newKeyCache(DefaultKeyCacheSize)
	case n > 0:
		c.cache = newKeyCache(n)
	}
	c.set = make(map[string]struct{}, len(cfg.Properties))
	for _, p := range cfg.Properties {
		if err := store.ValidatePropertyName(p); err != nil {
			return nil, fmt.Errorf("encryption: Config.Properties: %w", err)
		}
		if reserved(p) || p == store.TimestampProperty {
			return nil, fmt.Errorf("encryption: Config.Properties: %q is reserved", p)
		}
		if _, dup := c.set[p]; !dup {
			c.set[p] = struct{}{}
			c.props = append(c.props, p)
		}
	}
	slices.Sort(c.props)
	return c, nil
}

// Properties returns the names the codec encrypts, sorted.
func (c *Codec) Properties() []string { return slices.Clone(c.props) }

func (c *Codec) encrypted(name string) bool {
	_, ok := c.set[name]
	return ok
}

// ownName returns name in memory of its own: a backend's name may be
// valid only during the call that hands it over. A configured name comes
// from the codec's list, without a copy.
func (c *Codec) ownName(name string) string {
	if i, ok := slices.BinarySearch(c.props, name); ok {
		return c.props[i]
	}
	return string([]byte(name))
}

// sealer holds one write's content key: every encrypted property of the
// entity is sealed under it.
type sealer struct {
	c      *Codec
	aead   cipher.AEAD   // authenticated format
	cbc    *legacySealer // legacy format
	meta   string        // MetadataProperty or LegacyMetadataProperty
	nonces []byte        // random bytes drawn with the content key, 12 a property
	aadBuf []byte
}

func (c *Codec) newSealer(ctx context.Context, pk, rk string) (*sealer, error) {
	if c.key == nil {
		return nil, invalid("no Key to encrypt with: the Config is read-only")
	}
	// One read draws the content key and, for the authenticated format,
	// the nonces of the properties the entity may encrypt.
	n := cekSize
	if !c.legacy {
		n += nonceSize * len(c.props)
	}
	rnd := make([]byte, n)
	cek := rnd[:cekSize]
	defer clear(cek)
	if _, err := io.ReadFull(c.rand, rnd); err != nil {
		return nil, fmt.Errorf("encryption: reading random bytes: %w", err)
	}
	wk, alg, err := c.key.WrapKey(ctx, cek)
	if err != nil {
		return nil, fmt.Errorf("encryption: wrapping the content key: %w", err)
	}
	s := &sealer{c: c, nonces: rnd[cekSize:]}
	if c.legacy {
		s.cbc, err = newLegacySealer(c, cek, wk, alg, pk, rk)
		if err != nil {
			return nil, err
		}
		s.meta = s.cbc.meta
		return s, nil
	}
	if s.aead, err = newGCM(cek); err != nil {
		return nil, err
	}
	m := metadata{V: formatVersion, Enc: encGCM, KeyID: c.key.KeyID(), Alg: alg, WK: wk, Props: c.props}
	s.meta = string(appendMetadata(make([]byte, 0, metadataSize(&m)), &m))
	return s, nil
}

// seal encrypts v, the value of property name of entity (pk, rk) of table.
func (s *sealer) seal(table, pk, rk, name string, v any) ([]byte, error) {
	if err := store.ValidateValue(name, v); err != nil {
		return nil, err
	}
	if s.cbc != nil {
		str, ok := v.(string)
		if !ok {
			return nil, invalid("property %q: the legacy format encrypts strings only, not %T", name, v)
		}
		return s.cbc.seal(pk, rk, name, str)
	}
	// The value is encoded where its ciphertext goes and sealed in place.
	const head = 1 + nonceSize
	out := make([]byte, head, head+valueSize(v)+tagSize)
	out[0] = cipherV1
	if len(s.nonces) >= nonceSize {
		copy(out[1:], s.nonces[:nonceSize])
		s.nonces = s.nonces[nonceSize:]
	} else if _, err := io.ReadFull(s.c.rand, out[1:head]); err != nil {
		return nil, fmt.Errorf("encryption: reading random bytes: %w", err)
	}
	out = appendValue(out, v)
	s.aadBuf = aad(s.aadBuf[:0], table, pk, rk, name)
	return s.aead.Seal(out[:head], out[1:head], out[head:], s.aadBuf), nil
}

// Encrypt returns a copy of e with the configured properties encrypted
// for table, and the metadata that lets a reader decrypt them: the entity
// to insert or replace. A property e lacks is skipped. e must not hold
// the reserved metadata properties.
func (c *Codec) Encrypt(ctx context.Context, table string, e store.Entity) (store.Entity, error) {
	return c.encryptEntity(ctx, table, e, false)
}

func (c *Codec) encryptEntity(ctx context.Context, table string, e store.Entity, merge bool) (store.Entity, error) {
	for name, v := range e.Properties {
		if reserved(name) {
			return e, invalid("entity (%q, %q): property %q is reserved for encryption metadata", trunc(e.PartitionKey), trunc(e.RowKey), name)
		}
		if merge && v != nil && c.encrypted(name) {
			return e, mergeRefused(e.PartitionKey, e.RowKey, name)
		}
	}
	if merge || len(c.props) == 0 {
		return e, nil
	}
	s, err := c.newSealer(ctx, e.PartitionKey, e.RowKey)
	if err != nil {
		return e, err
	}
	out := e
	out.Properties = make(map[string]any, len(e.Properties)+2)
	for name, v := range e.Properties {
		if v != nil && c.encrypted(name) {
			ct, err := s.seal(table, e.PartitionKey, e.RowKey, name, v)
			if err != nil {
				return e, err
			}
			v = ct
		}
		out.Properties[name] = v
	}
	if s.cbc != nil {
		out.Properties[LegacyMetadataProperty] = s.meta
		out.Properties[LegacyPropertiesProperty] = s.cbc.names
	} else {
		out.Properties[MetadataProperty] = s.meta
	}
	return out, nil
}

func mergeRefused(pk, rk, name string) error {
	return invalid("entity (%q, %q): a merge cannot write the encrypted property %q (its content key would not match the stored one): write the entity with Replace",
		trunc(pk), trunc(rk), name)
}

// Decrypt returns a copy of e, read from table, with its encrypted
// properties decrypted and the reserved metadata properties removed. It
// reads the authenticated format and the legacy one. An entity without
// metadata and without any configured property comes back as it is; a
// configured property that does not decrypt is an error matching
// ErrDecrypt.
func (c *Codec) Decrypt(ctx context.Context, table string, e store.Entity) (store.Entity, error) {
	e = e.Clone() // decryption happens in place
	return c.decryptOwned(ctx, table, e)
}

// decryptOwned is Decrypt of an entity whose []byte values the caller
// gives up.
func (c *Codec) decryptOwned(ctx context.Context, table string, e store.Entity) (store.Entity, error) {
	var b driver.EntityBuilder
	d := c.newReader(ctx, table, &b)
	defer d.release()
	if err := driver.ReadEntity(&e, d); err != nil {
		return e, err
	}
	if err := d.flush(); err != nil {
		return e, err
	}
	if b.Entity.Properties == nil {
		b.Entity.Properties = map[string]any{}
	}
	return b.Entity, nil
}

// encSource encrypts the output of a PropertySource as it passes.
type encSource struct {
	c      *Codec
	ctx    context.Context
	table  string
	pk, rk string
	src    store.PropertySource
	merge  bool
	s      *sealer // made on the first call, kept for the others
}

func (c *Codec) wrapSource(ctx context.Context, table string, a store.Action) store.PropertySource {
	merge := a.Kind == store.ActionUpdateMerge || a.Kind == store.ActionUpsertMerge
	return &encSource{c: c, ctx: ctx, table: table, pk: a.Entity.PartitionKey, rk: a.Entity.RowKey, src: a.Source, merge: merge}
}

func (e *encSource) WriteProperties(w store.PropertyWriter) error {
	if !e.merge && len(e.c.props) > 0 && e.s == nil {
		s, err := e.c.newSealer(e.ctx, e.pk, e.rk)
		if err != nil {
			return err
		}
		e.s = s
	}
	ew := encWriter{e: e, w: w}
	if err := e.src.WriteProperties(&ew); err != nil {
		return err
	}
	return ew.rest("")
}

// encWriter is the PropertyWriter a source writes to: it passes the
// properties on to the backend's writer, encrypting the configured ones,
// and writes the metadata properties in their place in the name order.
type encWriter struct {
	e    *encSource
	w    store.PropertyWriter
	done int // metadata properties written
}

// rest writes the metadata properties that sort before next ("" for all).
func (ew *encWriter) rest(next string) error {
	s := ew.e.s
	if s == nil {
		return nil
	}
	if s.cbc != nil {
		for ew.done < 2 {
			n := legacy1Name
			if ew.done == 1 {
				n = legacy2Name
			}
			if next != "" && next < n.String() {
				return nil
			}
			ew.done++
			var err error
			if ew.done == 1 {
				err = ew.w.String(n, s.meta)
			} else {
				err = ew.w.Binary(n, s.cbc.names)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if ew.done == 0 && (next == "" || next > MetadataProperty) {
		ew.done = 1
		return ew.w.String(metaName, s.meta)
	}
	return nil
}

// before handles the metadata and the checks due before property n.
// encrypt reports that n is to be encrypted.
func (ew *encWriter) before(n store.PropertyName, isNil bool) (encrypt bool, err error) {
	name := n.String()
	if reserved(name) {
		return false, invalid("entity (%q, %q): property %q is reserved for encryption metadata", trunc(ew.e.pk), trunc(ew.e.rk), name)
	}
	if err := ew.rest(name); err != nil {
		return false, err
	}
	if isNil || !ew.e.c.encrypted(name) {
		return false, nil
	}
	if ew.e.merge {
		return false, mergeRefused(ew.e.pk, ew.e.rk, name)
	}
	return true, nil
}

func (ew *encWriter) sealed(n store.PropertyName, v any) error {
	ct, err := ew.e.s.seal(ew.e.table, ew.e.pk, ew.e.rk, n.String(), v)
	if err != nil {
		return err
	}
	return ew.w.Binary(n, ct)
}

func (ew *encWriter) String(n store.PropertyName, v string) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.String(n, v)
}

func (ew *encWriter) Binary(n store.PropertyName, v []byte) error {
	if enc, err := ew.before(n, v == nil); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.Binary(n, v)
}

func (ew *encWriter) Bool(n store.PropertyName, v bool) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.Bool(n, v)
}

func (ew *encWriter) Int32(n store.PropertyName, v int32) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.Int32(n, v)
}

func (ew *encWriter) Int64(n store.PropertyName, v int64) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.Int64(n, v)
}

func (ew *encWriter) Double(n store.PropertyName, v float64) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.Double(n, v)
}

func (ew *encWriter) Time(n store.PropertyName, v time.Time) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.Time(n, v)
}

func (ew *encWriter) GUID(n store.PropertyName, v store.GUID) error {
	if enc, err := ew.before(n, false); err != nil || enc {
		if err != nil {
			return err
		}
		return ew.sealed(n, v)
	}
	return ew.w.GUID(n, v)
}
