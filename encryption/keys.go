package encryption

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"sync"
)

// KeyWrapper holds a key-encryption key: it wraps the content keys that
// encrypt entities and unwraps them again. The key itself never leaves
// it: a LocalKey keeps it in memory, a Key Vault wrapper asks the vault.
// Implementations are safe for concurrent use.
type KeyWrapper interface {
	// KeyID names the key; it is stored beside every content key the
	// key wraps, so that a reader finds the key again (see KeyResolver),
	// and it changes when the key is rotated.
	KeyID() string
	// WrapKey wraps cek and names the algorithm it used ("A256KW").
	WrapKey(ctx context.Context, cek []byte) (wrapped []byte, alg string, err error)
	// UnwrapKey unwraps a content key this key wrapped; alg and keyID are
	// the ones stored with it. A wrong key or a changed byte is an error.
	UnwrapKey(ctx context.Context, wrapped []byte, alg, keyID string) ([]byte, error)
}

// KeyResolver finds the KeyWrapper of a key id: the key that wrapped a
// stored content key. During a rotation it knows the old keys and the
// new one, so that entities written under either can be read.
type KeyResolver interface {
	ResolveKey(ctx context.Context, keyID string) (KeyWrapper, error)
}

// ErrKeyNotFound matches a key id that no resolver knows.
var ErrKeyNotFound = errors.New("encryption: no key with this id")

// LocalKey is a KeyWrapper over a key-encryption key held in memory: AES
// key wrap (RFC 3394) with a 128, 192 or 256-bit key ("A128KW",
// "A192KW", "A256KW"; use 256 bits).
type LocalKey struct {
	id    string
	alg   string
	block cipher.Block
}

// NewLocalKey returns the LocalKey named id over kek, 16, 24 or 32 bytes
// (32 for A256KW, the algorithm to use). The key is copied into an AES
// key schedule; clear kek afterwards if it should not stay in memory.
func NewLocalKey(id string, kek []byte) (*LocalKey, error) {
	if id == "" {
		return nil, errors.New("encryption: a key needs an id")
	}
	var alg string
	switch len(kek) {
	case 16:
		alg = AlgA128KW
	case 24:
		alg = AlgA192KW
	case 32:
		alg = AlgA256KW
	default:
		return nil, fmt.Errorf("encryption: key %q: a key-encryption key is 16, 24 or 32 bytes, not %d", id, len(kek))
	}
	b, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	return &LocalKey{id: id, alg: alg, block: b}, nil
}

// Key-wrapping algorithms of a LocalKey, by their JSON Web Algorithms names.
const (
	AlgA128KW = "A128KW"
	AlgA192KW = "A192KW"
	AlgA256KW = "A256KW"
)

// KeyID implements KeyWrapper.
func (k *LocalKey) KeyID() string { return k.id }

// WrapKey implements KeyWrapper.
func (k *LocalKey) WrapKey(_ context.Context, cek []byte) ([]byte, string, error) {
	w, err := wrapAESKW(k.block, cek)
	if err != nil {
		return nil, "", fmt.Errorf("encryption: key %q: %w", k.id, err)
	}
	return w, k.alg, nil
}

// UnwrapKey implements KeyWrapper.
func (k *LocalKey) UnwrapKey(_ context.Context, wrapped []byte, alg, keyID string) ([]byte, error) {
	if keyID != k.id {
		return nil, fmt.Errorf("encryption: content key wrapped by key %q, not %q: %w", keyID, k.id, ErrKeyNotFound)
	}
	if alg != k.alg {
		return nil, fmt.Errorf("encryption: key %q unwraps %s, not %q", k.id, k.alg, alg)
	}
	cek, err := unwrapAESKW(k.block, wrapped)
	if err != nil {
		return nil, fmt.Errorf("encryption: key %q: %w", k.id, err)
	}
	return cek, nil
}

// Keyring is a KeyResolver over a fixed set of keys, by id: the current
// key and the ones it replaced. It is safe for concurrent use.
type Keyring struct {
	mu   sync.RWMutex
	keys map[string]KeyWrapper
}

// NewKeyring returns a keyring holding keys.
func NewKeyring(keys ...KeyWrapper) *Keyring {
	r := &Keyring{keys: make(map[string]KeyWrapper, len(keys))}
	for _, k := range keys {
		r.Add(k)
	}
	return r
}

// Add adds k, replacing a key of the same id.
func (r *Keyring) Add(k KeyWrapper) {
	r.mu.Lock()
	r.keys[k.KeyID()] = k
	r.mu.Unlock()
}

// ResolveKey implements KeyResolver.
func (r *Keyring) ResolveKey(_ context.Context, keyID string) (KeyWrapper, error) {
	r.mu.RLock()
	k, ok := r.keys[keyID]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("encryption: key %q: %w", keyID, ErrKeyNotFound)
	}
	return k, nil
}

// single resolves the id of one key.
type single struct{ k KeyWrapper }

func (s single) ResolveKey(_ context.Context, keyID string) (KeyWrapper, error) {
	if keyID != s.k.KeyID() {
		return nil, fmt.Errorf("encryption: key %q: %w", keyID, ErrKeyNotFound)
	}
	return s.k, nil
}
