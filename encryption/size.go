package encryption

import (
	"sync"

	"github.com/tablekit/tablekit/store"
)

// ActionWireSize estimates a's share of a transaction body as the table
// sends it, encrypted: each encrypted value is a binary ciphertext longer
// than the value (base64 on the wire) and the metadata is added, so an
// entity grows by about a third of its encrypted values and a few hundred
// bytes. store.ActionWireSizeIn finds it, so the bulk writer and the
// mapper's Batch split transactions by the size the service receives.
func (t *table) ActionWireSize(a *store.Action) int {
	merge := a.Kind == store.ActionUpdateMerge || a.Kind == store.ActionUpsertMerge
	if a.Kind == store.ActionDelete || merge || len(t.c.props) == 0 {
		return store.ActionWireSize(a)
	}
	full, err := a.WithProperties()
	if err != nil {
		return store.ActionWireSize(a)
	}
	return store.ActionFraming(a) + t.c.wireSize(&full.Entity)
}

// wireSize bounds the JSON of e encrypted by c: e with every value c
// encrypts replaced by a binary value of its ciphertext's length, and the
// metadata with a wrapped key of 512 bytes (an RSA-4096 wrap; an AES key
// wrap takes 40).
func (c *Codec) wireSize(e *store.Entity) int {
	s := store.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: make(map[string]any, len(e.Properties)+2)}
	zero := zeros()
	for name, v := range e.Properties {
		if v == nil || !c.encrypted(name) {
			s.Properties[name] = v
			continue
		}
		n := 1 + nonceSize + valueSize(v) + tagSize
		if c.legacy {
			n = (valueSize(v)/16 + 1) * 16
		}
		if n <= len(zero) {
			s.Properties[name] = zero[:n]
		} else {
			s.Properties[name] = make([]byte, n)
		}
	}
	var kid string
	if c.key != nil {
		kid = c.key.KeyID()
	}
	m := metadata{V: formatVersion, Enc: encGCM, KeyID: kid, Alg: "RSA-OAEP-256", WK: zero[:512], Props: c.props}
	meta := string(appendMetadata(nil, &m))
	if c.legacy {
		// The JSON of the wrapped key, the agent and the IV, as long as
		// the authenticated format's metadata and a quarter more; the
		// encrypted list of names.
		s.Properties[LegacyMetadataProperty] = meta + meta[:len(meta)/4]
		s.Properties[LegacyPropertiesProperty] = zero[:(metadataSize(&m)/16+1)*16]
	} else {
		s.Properties[MetadataProperty] = meta
	}
	return store.EstimateWireSize(&s)
}

// zeros is a buffer of zero bytes as long as the largest encrypted value,
// shared read-only by the size estimates.
var zeros = sync.OnceValue(func() []byte {
	return make([]byte, 1+nonceSize+tagSize+1+store.MaxBinaryBytes)
})
