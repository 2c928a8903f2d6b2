// Package azkeyvault wraps the content keys of package encryption with a
// key held in Azure Key Vault or Managed HSM, through the official SDK
// (azkeys): the key-encryption key never leaves the vault, every wrap and
// unwrap is a request to it. RSA keys wrap with RSA-OAEP-256, symmetric
// HSM keys with A256KW; the key id stored with every content key is the
// key's versioned URL, so that entities written before a rotation name
// the version that unwraps them.
//
// It lives apart from package encryption so that a program that does not
// use Key Vault links none of the SDK.
package azkeyvault

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"

	"github.com/tablekit/tablekit/encryption"
)

// Key-wrapping algorithms of Key Vault, by their JSON Web Algorithms
// names, which are also the names stored in the encryption metadata.
const (
	// AlgRSAOAEP256 is RSAES-OAEP with SHA-256, for RSA and RSA-HSM keys:
	// the algorithm to use with RSA keys.
	AlgRSAOAEP256 = "RSA-OAEP-256"
	// AlgRSAOAEP is RSAES-OAEP with SHA-1: it is unwrapped, for content
	// keys written so by other libraries (the legacy format's writers),
	// and never chosen to wrap.
	AlgRSAOAEP = "RSA-OAEP"
	// AlgA256KW is AES key wrap with a 256-bit key, for the symmetric
	// keys (oct-HSM) of a Managed HSM.
	AlgA256KW = encryption.AlgA256KW
)

// vaultAlgorithm maps an algorithm name of the metadata to the SDK's.
func vaultAlgorithm(alg string) (azkeys.EncryptionAlgorithm, bool) {
	switch alg {
	case AlgRSAOAEP256:
		return azkeys.EncryptionAlgorithmRSAOAEP256, true
	case AlgRSAOAEP:
		return azkeys.EncryptionAlgorithmRSAOAEP, true
	case AlgA256KW:
		return azkeys.EncryptionAlgorithmA256KW, true
	}
	return "", false
}

// metadataAlgorithm maps an SDK algorithm back to the name stored.
func metadataAlgorithm(a azkeys.EncryptionAlgorithm) (string, bool) {
	switch a {
	case azkeys.EncryptionAlgorithmRSAOAEP256:
		return AlgRSAOAEP256, true
	case azkeys.EncryptionAlgorithmRSAOAEP:
		return AlgRSAOAEP, true
	case azkeys.EncryptionAlgorithmA256KW:
		return AlgA256KW, true
	}
	return "", false
}

// KeyID is a parsed versioned key URL,
// https://<vault>/keys/<name>/<version>.
type keyID struct {
	vault, name, version string
}

func parseKeyID(id string) (keyID, error) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return keyID{}, fmt.Errorf("azkeyvault: key id %q is not a versioned key URL (https://<vault>/keys/<name>/<version>)", id)
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 3 || parts[0] != "keys" || parts[1] == "" || parts[2] == "" {
		return keyID{}, fmt.Errorf("azkeyvault: key id %q is not a versioned key URL (https://<vault>/keys/<name>/<version>)", id)
	}
	return keyID{vault: "https://" + strings.ToLower(u.Host), name: parts[1], version: parts[2]}, nil
}

func (k keyID) String() string { return k.vault + "/keys/" + k.name + "/" + k.version }

// Key is an encryption.KeyWrapper over one version of a Key Vault key.
// It is safe for concurrent use.
type Key struct {
	client *azkeys.Client
	id     keyID
	sid    string
	alg    string
}

// NewKey returns the wrapper of the key version keyID, a versioned key
// URL such as https://myvault.vault.azure.net/keys/tables/0123abcd,
// reached through client, an azkeys.Client of that key's vault. alg is
// the algorithm it wraps with: AlgRSAOAEP256 for an RSA key, AlgA256KW for
// a symmetric Managed HSM key. The identity behind the client's credential
// needs the wrapKey and unwrapKey permissions on the key.
func NewKey(client *azkeys.Client, keyID, alg string) (*Key, error) {
	if client == nil {
		return nil, errors.New("azkeyvault: NewKey needs a client")
	}
	id, err := parseKeyID(keyID)
	if err != nil {
		return nil, err
	}
	if alg == AlgRSAOAEP {
		return nil, fmt.Errorf("azkeyvault: key %s: wrap with %s, not %s (SHA-1)", id, AlgRSAOAEP256, AlgRSAOAEP)
	}
	if _, ok := vaultAlgorithm(alg); !ok {
		return nil, fmt.Errorf("azkeyvault: key %s: algorithm %q is not %s or %s", id, alg, AlgRSAOAEP256, AlgA256KW)
	}
	return &Key{client: client, id: id, sid: id.String(), alg: alg}, nil
}

// KeyID implements encryption.KeyWrapper: the versioned key URL.
func (k *Key) KeyID() string { return k.sid }

// WrapKey implements encryption.KeyWrapper with the vault's wrapkey
// operation.
func (k *Key) WrapKey(ctx context.Context, cek []byte) ([]byte, string, error) {
	a, _ := vaultAlgorithm(k.alg)
	resp, err := k.client.WrapKey(ctx, k.id.name, k.id.version, azkeys.KeyOperationParameters{Algorithm: &a, Value: cek}, nil)
	if err != nil {
		return nil, "", vaultError("wrapkey", k.sid, err)
	}
	if err := k.checkKID(resp.KID); err != nil {
		return nil, "", err
	}
	if len(resp.Result) == 0 {
		return nil, "", fmt.Errorf("azkeyvault: key %s: wrapkey returned no value", k.sid)
	}
	alg, _ := metadataAlgorithm(a)
	return resp.Result, alg, nil
}

// UnwrapKey implements encryption.KeyWrapper with the vault's unwrapkey
// operation. keyID must be this key's id; alg one of the algorithms of
// this package.
func (k *Key) UnwrapKey(ctx context.Context, wrapped []byte, alg, keyID string) ([]byte, error) {
	if keyID != k.sid {
		return nil, fmt.Errorf("azkeyvault: content key wrapped by key %q, not %q: %w", keyID, k.sid, encryption.ErrKeyNotFound)
	}
	a, ok := vaultAlgorithm(alg)
	if !ok {
		return nil, fmt.Errorf("azkeyvault: key %s: algorithm %q is not one Key Vault unwraps here (%s, %s, %s)", k.sid, alg, AlgRSAOAEP256, AlgA256KW, AlgRSAOAEP)
	}
	resp, err := k.client.UnwrapKey(ctx, k.id.name, k.id.version, azkeys.KeyOperationParameters{Algorithm: &a, Value: wrapped}, nil)
	if err != nil {
		return nil, vaultError("unwrapkey", k.sid, err)
	}
	if err := k.checkKID(resp.KID); err != nil {
		clear(resp.Result)
		return nil, err
	}
	if len(resp.Result) == 0 {
		return nil, fmt.Errorf("azkeyvault: key %s: unwrapkey returned no value", k.sid)
	}
	return resp.Result, nil
}

// checkKID refuses an answer about another key than the one asked.
func (k *Key) checkKID(kid *azkeys.ID) error {
	if kid == nil {
		return nil
	}
	got, err := parseKeyID(string(*kid))
	if err != nil || got.name != k.id.name || got.version != k.id.version {
		return fmt.Errorf("azkeyvault: key %s: the vault answered for key %q", k.sid, string(*kid))
	}
	return nil
}

// Error is a refusal by the vault of a wrap or unwrap. Its message names
// the operation, the key id, the HTTP status and the service's error
// code, never the key material or the credential. A missing key or
// version (404) matches encryption.ErrKeyNotFound.
type Error struct {
	// Op is "wrapkey" or "unwrapkey".
	Op string
	// KeyID is the versioned key URL.
	KeyID string
	// StatusCode is the HTTP status of the vault's answer.
	StatusCode int
	// Code is the service's error code, such as "Forbidden" or "KeyNotFound".
	Code string
	// Err is the SDK's *azcore.ResponseError.
	Err error
}

func (e *Error) Error() string {
	var hint string
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = ": the identity lacks the wrapKey/unwrapKey permission on the key, or the vault's firewall refuses it"
	case http.StatusNotFound:
		hint = ": no such key or key version in the vault"
	case http.StatusBadRequest:
		hint = ": the vault refused the request (a wrong algorithm for the key type, or a content key it did not wrap)"
	}
	code := e.Code
	if code == "" {
		code = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("azkeyvault: %s with key %s: %d %s%s", e.Op, e.KeyID, e.StatusCode, code, hint)
}

// Unwrap returns the SDK's error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is encryption.ErrKeyNotFound for a 404.
func (e *Error) Is(target error) bool {
	return target == encryption.ErrKeyNotFound && e.StatusCode == http.StatusNotFound
}

func vaultError(op, kid string, err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return &Error{Op: op, KeyID: kid, StatusCode: re.StatusCode, Code: re.ErrorCode, Err: re}
	}
	return fmt.Errorf("azkeyvault: %s with key %s: %w", op, kid, err)
}

// Resolver is an encryption.KeyResolver of Key Vault key versions: it
// resolves any versioned key URL of the vaults and key names it was
// given, so that a reader finds the version that wrapped each stored
// content key, before and after a rotation. Key ids of other vaults or
// keys are refused (ErrKeyNotFound) without a request: stored metadata
// never decides where a token is sent. It is safe for concurrent use.
type Resolver struct {
	clients map[string]*azkeys.Client // by vault URL, lower case
	names   []string
	mu      sync.Mutex
	keys    map[string]*Key
}

// NewResolver returns a resolver of the versions of the keys named names
// (all the keys of the vault when none is given) in the vault each
// client reaches; vaults maps a vault URL (https://myvault.vault.azure.net)
// to its client.
func NewResolver(vaults map[string]*azkeys.Client, names ...string) (*Resolver, error) {
	r := &Resolver{clients: make(map[string]*azkeys.Client, len(vaults)), names: slices.Clone(names), keys: map[string]*Key{}}
	for v, c := range vaults {
		u, err := url.Parse(strings.TrimSuffix(v, "/"))
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || c == nil {
			return nil, fmt.Errorf("azkeyvault: %q is not a vault URL with a client (https://<vault>)", v)
		}
		r.clients["https://"+strings.ToLower(u.Host)] = c
	}
	if len(r.clients) == 0 {
		return nil, errors.New("azkeyvault: NewResolver needs a vault")
	}
	return r, nil
}

// ResolveKey implements encryption.KeyResolver. The wrapper it returns
// wraps with AlgRSAOAEP256; it unwraps with the algorithm stored.
func (r *Resolver) ResolveKey(_ context.Context, keyID string) (encryption.KeyWrapper, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k, ok := r.keys[keyID]; ok {
		return k, nil
	}
	id, err := parseKeyID(keyID)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, encryption.ErrKeyNotFound)
	}
	c, ok := r.clients[id.vault]
	if !ok || (len(r.names) > 0 && !slices.Contains(r.names, id.name)) {
		return nil, fmt.Errorf("azkeyvault: key %q is not in a vault or among the keys this resolver was given: %w", keyID, encryption.ErrKeyNotFound)
	}
	if id.String() != keyID { // the stored id must be the canonical one the Key reports
		return nil, fmt.Errorf("azkeyvault: key id %q is not canonical (%s): %w", keyID, id, encryption.ErrKeyNotFound)
	}
	k := &Key{client: c, id: id, sid: keyID, alg: AlgRSAOAEP256}
	if len(r.keys) >= 1024 {
		clear(r.keys)
	}
	r.keys[keyID] = k
	return k, nil
}
