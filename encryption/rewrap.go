package encryption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/store"
)

// RewrapResult counts what Rewrap did.
type RewrapResult struct {
	// Rewrapped entities now hold their content key wrapped by the new key.
	Rewrapped int
	// Current entities were already wrapped by it.
	Current int
	// Plain entities carry no encryption metadata.
	Plain int
}

// Rewrap rotates the key-encryption key of the entities q selects in t,
// a table as stored (not an encrypting table): for each entity it
// unwraps the content key with the key keys resolves from the stored key
// id, wraps it with key, and replaces the metadata property alone with a
// merge conditional on the ETag it read. The encrypted values are not
// touched, so no plaintext is ever produced, and the cost is one small
// write per entity. Entities already wrapped by key are skipped, so a
// stopped rotation is resumed by running it again. An entity changed
// between the read and the write is read again and retried; when its
// content key does not unwrap, Rewrap stops with an error matching
// ErrDecrypt. Both formats are rotated: a legacy entity keeps its format.
//
// Once Rewrap has covered every entity, the old key can be dropped from
// the resolver of the readers.
func Rewrap(ctx context.Context, t store.Table, q store.Query, keys KeyResolver, key KeyWrapper) (RewrapResult, error) {
	var res RewrapResult
	q.Select = []string{MetadataProperty, LegacyMetadataProperty}
	for {
		p, err := t.Query(ctx, q)
		if err != nil {
			return res, err
		}
		for _, e := range p.Entities {
			if err := rewrapOne(ctx, t, e, keys, key, &res); err != nil {
				return res, err
			}
		}
		if p.Continuation == "" {
			return res, nil
		}
		q.Continuation = p.Continuation
	}
}

func rewrapOne(ctx context.Context, t store.Table, e store.Entity, keys KeyResolver, key KeyWrapper, res *RewrapResult) error {
	for attempt := 0; ; attempt++ {
		name, meta, ok := rewrapMeta(e)
		if !ok {
			res.Plain++
			return nil
		}
		fail := func(reason string, err error) error {
			return &DecryptError{Table: t.Name(), PartitionKey: e.PartitionKey, RowKey: e.RowKey, Reason: reason, Err: err}
		}
		next, current, err := rewrapValue(ctx, name, meta, keys, key)
		if err != nil {
			return fail("rewrapping the content key", err)
		}
		if current {
			res.Current++
			return nil
		}
		_, err = t.Update(ctx, store.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey,
			Properties: map[string]any{name: next}}, store.Merge, e.ETag)
		if err == nil {
			res.Rewrapped++
			return nil
		}
		if !errors.Is(err, store.ErrPreconditionFailed) || attempt >= 5 {
			return err
		}
		// Changed since the read: read it again.
		if e, err = t.Get(ctx, e.PartitionKey, e.RowKey, &store.GetOptions{Select: []string{MetadataProperty, LegacyMetadataProperty}}); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return err
		}
	}
}

func rewrapMeta(e store.Entity) (name, meta string, ok bool) {
	if s, ok := e.Properties[MetadataProperty].(string); ok {
		return MetadataProperty, s, true
	}
	if s, ok := e.Properties[LegacyMetadataProperty].(string); ok {
		return LegacyMetadataProperty, s, true
	}
	return "", "", false
}

// rewrapValue returns the metadata value with the content key wrapped by
// key, or current when it already is.
func rewrapValue(ctx context.Context, name, meta string, keys KeyResolver, key KeyWrapper) (next string, current bool, err error) {
	if name == MetadataProperty {
		m, err := parseMetadata(meta)
		if err != nil {
			return "", false, err
		}
		if m.KeyID == key.KeyID() {
			return "", true, nil
		}
		wk, alg, err := rewrapKey(ctx, keys, key, m.WK, m.Alg, m.KeyID)
		if err != nil {
			return "", false, err
		}
		m.KeyID, m.Alg, m.WK = key.KeyID(), alg, wk
		return string(appendMetadata(nil, m)), false, nil
	}
	// Legacy: keep every other member of the JSON as it is.
	var doc map[string]json.RawMessage
	var d legacyData
	if json.Unmarshal([]byte(meta), &doc) != nil || json.Unmarshal([]byte(meta), &d) != nil {
		return "", false, errors.New(LegacyMetadataProperty + " is not valid JSON")
	}
	w := d.WrappedContentKey
	if w.KeyID == key.KeyID() {
		return "", true, nil
	}
	wk, alg, err := rewrapKey(ctx, keys, key, w.EncryptedKey, w.Algorithm, w.KeyID)
	if err != nil {
		return "", false, err
	}
	w.KeyID, w.EncryptedKey, w.Algorithm = key.KeyID(), wk, alg
	if doc["WrappedContentKey"], err = json.Marshal(w); err != nil {
		return "", false, err
	}
	out, err := json.Marshal(doc)
	return string(out), false, err
}

func rewrapKey(ctx context.Context, keys KeyResolver, key KeyWrapper, wrapped []byte, alg, keyID string) ([]byte, string, error) {
	old, err := keys.ResolveKey(ctx, keyID)
	if err != nil {
		return nil, "", err
	}
	cek, err := old.UnwrapKey(ctx, wrapped, alg, keyID)
	if err != nil {
		return nil, "", err
	}
	defer clear(cek)
	if len(cek) != cekSize {
		return nil, "", fmt.Errorf("the content key has %d bytes, not %d", len(cek), cekSize)
	}
	return key.WrapKey(ctx, cek)
}
