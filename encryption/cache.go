package encryption

import (
	"crypto/cipher"
	"encoding/binary"
	"sync"
)

// DefaultKeyCacheSize is the number of unwrapped content keys a Codec
// keeps when Config.KeyCacheSize is 0.
const DefaultKeyCacheSize = 1024

// keyCache keeps the AES-GCM ciphers of the content keys unwrapped last,
// by key id, algorithm and wrapped key, so that reading an entity again
// costs neither an unwrap (a Key Vault request, with a remote key) nor a
// key schedule. It evicts the least recently used entry beyond max. The
// ciphers hold the plaintext content keys' AES key schedules: whoever can
// read the process's memory can read them, as they can the values being
// decrypted. It is safe for concurrent use.
type keyCache struct {
	mu      sync.Mutex
	max     int
	entries map[string]*cacheEntry
	lru     cacheEntry // sentinel: lru.next is the most recent entry
}

type cacheEntry struct {
	key        string
	aead       cipher.AEAD
	prev, next *cacheEntry
}

func newKeyCache(max int) *keyCache {
	c := &keyCache{max: max, entries: make(map[string]*cacheEntry, min(max, 64))}
	c.lru.next, c.lru.prev = &c.lru, &c.lru
	return c
}

// cacheKey appends the key of a wrapped content key to b.
func cacheKey(b []byte, keyID, alg string, wk []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(keyID)))
	b = append(b, keyID...)
	b = binary.AppendUvarint(b, uint64(len(alg)))
	b = append(b, alg...)
	return append(b, wk...)
}

func (c *keyCache) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (c *keyCache) front(e *cacheEntry) {
	e.prev, e.next = &c.lru, c.lru.next
	c.lru.next.prev = e
	c.lru.next = e
}

// get returns the cipher of the content key under k, or nil.
func (c *keyCache) get(k []byte) cipher.AEAD {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[string(k)]
	if !ok {
		return nil
	}
	if c.lru.next != e {
		c.unlink(e)
		c.front(e)
	}
	// Read under the lock: put and clear write an entry's cipher.
	return e.aead
}

// put keeps a under k, evicting the least recently used entry if full.
func (c *keyCache) put(k []byte, a cipher.AEAD) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[string(k)]; ok {
		e.aead = a
		return
	}
	if len(c.entries) >= c.max {
		old := c.lru.prev
		c.unlink(old)
		delete(c.entries, old.key)
		old.aead = nil
	}
	e := &cacheEntry{key: string(k), aead: a}
	c.entries[e.key] = e
	c.front(e)
}

func (c *keyCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.next; e != &c.lru; e = e.next {
		e.aead = nil
	}
	clear(c.entries)
	c.lru.next, c.lru.prev = &c.lru, &c.lru
}

func (c *keyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// ClearKeyCache forgets every cached content key (see Config.KeyCacheSize):
// call it after dropping a key from the resolver, so that entities whose
// content key it had unwrapped no longer decrypt from the cache.
func (c *Codec) ClearKeyCache() {
	if c.cache != nil {
		c.cache.clear()
	}
}
