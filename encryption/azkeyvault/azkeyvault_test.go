package azkeyvault

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// A TEST token and a TEST value: neither may appear in an error.
const (
	testToken = "test-token-not-a-secret-0123456789"
	plaintext = "s3cr3t-plaintext-value"
)

// fakeCredential hands out testToken.
type fakeCredential struct{}

func (fakeCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: testToken, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// fakeVault answers the Key Vault REST operations wrapkey and unwrapkey
// (POST {vault}/keys/{name}/{version}/wrapkey?api-version=...) as the
// service does: a 401 challenge to a request without a token, then
// {"kid": <versioned key URL>, "value": <base64url>} or an error body
// {"error": {"code", "message"}} with the service's status and codes.
type fakeVault struct {
	srv *httptest.Server
	mu  sync.Mutex
	rsa map[string]*rsa.PrivateKey      // "name/version"
	oct map[string]*encryption.LocalKey // "name/version"
	ops map[string]int                  // "wrapkey" or "unwrapkey" by count
	got []map[string]string             // request bodies
	// challenges counts the requests without a token, which the SDK
	// sends first to learn the tenant and the scope
	challenges int
}

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

func testRSAKey(t *testing.T) *rsa.PrivateKey {
	rsaOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048) // a TEST key, made per run
		if err != nil {
			panic(err)
		}
		rsaKey = k
	})
	return rsaKey
}

func newFakeVault(t *testing.T) *fakeVault {
	t.Helper()
	v := &fakeVault{rsa: map[string]*rsa.PrivateKey{}, oct: map[string]*encryption.LocalKey{}, ops: map[string]int{}}
	v.srv = httptest.NewTLSServer(http.HandlerFunc(v.serve))
	t.Cleanup(v.srv.Close)
	return v
}

func (v *fakeVault) addRSA(t *testing.T, name, version string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rsa[name+"/"+version] = testRSAKey(t)
	return v.srv.URL + "/keys/" + name + "/" + version
}

func (v *fakeVault) addOct(t *testing.T, name, version string, seed byte) string {
	k, err := encryption.NewLocalKey("hsm", []byte(strings.Repeat(string(rune('a'+seed)), 32))) // a TEST key
	if err != nil {
		t.Fatal(err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.oct[name+"/"+version] = k
	return v.srv.URL + "/keys/" + name + "/" + version
}

func (v *fakeVault) count(op string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ops[op]
}

func vaultErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

func (v *fakeVault) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") == "" {
		v.mu.Lock()
		v.challenges++
		v.mu.Unlock()
		if r.ContentLength > 0 {
			vaultErr(w, http.StatusBadRequest, "BadParameter", "a request without a token carried a body")
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer authorization="https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000", resource="https://vault.azure.net"`)
		vaultErr(w, http.StatusUnauthorized, "Unauthorized", "AKV10000: Request is missing a Bearer or PoP token.")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		vaultErr(w, http.StatusUnauthorized, "Unauthorized", "AKV10032: Invalid issuer.")
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 4 || parts[0] != "keys" || r.URL.Query().Get("api-version") == "" {
		vaultErr(w, http.StatusBadRequest, "BadParameter", "unexpected request")
		return
	}
	name, version, op := parts[1], parts[2], parts[3]
	var body struct {
		Alg   string `json:"alg"`
		Value string `json:"value"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		vaultErr(w, http.StatusBadRequest, "BadParameter", "The request body is not valid JSON.")
		return
	}
	in, err := base64.RawURLEncoding.DecodeString(body.Value)
	if err != nil {
		vaultErr(w, http.StatusBadRequest, "BadParameter", "Property value is not base64url.")
		return
	}
	v.mu.Lock()
	v.ops[op]++
	v.got = append(v.got, map[string]string{"op": op, "alg": body.Alg})
	rk, isRSA := v.rsa[name+"/"+version]
	ok, isOct := v.oct[name+"/"+version]
	v.mu.Unlock()
	if name == "forbidden" {
		vaultErr(w, http.StatusForbidden, "Forbidden", "The user, group or application 'appid=00000000-0000-0000-0000-000000000000' does not have keys "+op+" permission on key vault 'fake'.")
		return
	}
	if !isRSA && !isOct {
		vaultErr(w, http.StatusNotFound, "KeyNotFound", fmt.Sprintf("A key with (name/id) %s/%s was not found in this key vault.", name, version))
		return
	}
	var out []byte
	switch {
	case isRSA && (body.Alg == "RSA-OAEP-256" || body.Alg == "RSA-OAEP"):
		h := sha256.New()
		if body.Alg == "RSA-OAEP" {
			h = sha1.New()
		}
		if op == "wrapkey" {
			out, err = rsa.EncryptOAEP(h, rand.Reader, &rk.PublicKey, in, nil)
		} else {
			out, err = rsa.DecryptOAEP(h, nil, rk, in, nil)
		}
	case isOct && body.Alg == "A256KW":
		if op == "wrapkey" {
			out, _, err = ok.WrapKey(r.Context(), in)
		} else {
			out, err = ok.UnwrapKey(r.Context(), in, "A256KW", "hsm")
		}
	default:
		vaultErr(w, http.StatusBadRequest, "BadParameter", "Algorithm '"+body.Alg+"' is not supported for this key type.")
		return
	}
	if err != nil {
		vaultErr(w, http.StatusBadRequest, "BadParameter", "Error decrypting the value.")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"kid":   v.srv.URL + "/keys/" + name + "/" + version,
		"value": base64.RawURLEncoding.EncodeToString(out),
	})
}

// client returns an azkeys client of the fake vault: it trusts the test
// server's certificate, does not retry, and takes its token from
// fakeCredential. The challenge names vault.azure.net, not 127.0.0.1, so
// the resource check is off, as it must be for a vault behind a private
// name.
func (v *fakeVault) client(t *testing.T) *azkeys.Client {
	t.Helper()
	c, err := azkeys.NewClient(v.srv.URL, fakeCredential{}, &azkeys.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Transport: v.srv.Client(),
			Retry:     policy.RetryOptions{MaxRetries: -1},
		},
		DisableChallengeResourceVerification: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func encryptingTable(t *testing.T, cfg encryption.Config) (raw, enc store.Table) {
	t.Helper()
	ms := memstore.New()
	if err := ms.CreateTable(context.Background(), "Vaulted"); err != nil {
		t.Fatal(err)
	}
	raw = ms.Table("Vaulted")
	enc, err := encryption.NewTable(raw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return raw, enc
}

func roundTrip(t *testing.T, enc store.Table, rk string) {
	t.Helper()
	ctx := context.Background()
	if _, err := enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"Secret": plaintext, "Plain": "visible"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		e, err := enc.Get(ctx, "p", rk, nil)
		if err != nil || e.Properties["Secret"] != plaintext || e.Properties["Plain"] != "visible" {
			t.Fatalf("Get = %v, %v", e.Properties, err)
		}
	}
}

func storedMeta(t *testing.T, raw store.Table, rk string) map[string]any {
	t.Helper()
	e, err := raw.Get(context.Background(), "p", rk, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := e.Properties["Secret"].([]byte); len(s) == 0 || strings.Contains(string(s), plaintext) {
		t.Fatalf("stored Secret = %v", e.Properties["Secret"])
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Properties[encryption.MetadataProperty].(string)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRoundTripRSA(t *testing.T) {
	v := newFakeVault(t)
	kid := v.addRSA(t, "tables", "0123456789abcdef0123456789abcdef")
	key, err := NewKey(v.client(t), kid, AlgRSAOAEP256)
	if err != nil {
		t.Fatal(err)
	}
	if key.KeyID() != kid {
		t.Fatalf("KeyID = %q, want %q", key.KeyID(), kid)
	}
	raw, enc := encryptingTable(t, encryption.Config{Key: key, Properties: []string{"Secret"}})
	roundTrip(t, enc, "r1")
	m := storedMeta(t, raw, "r1")
	if m["kid"] != kid || m["alg"] != AlgRSAOAEP256 {
		t.Fatalf("metadata kid %v alg %v", m["kid"], m["alg"])
	}
	// three reads, one unwrap: the codec's cache keeps the content key
	if w, u := v.count("wrapkey"), v.count("unwrapkey"); w != 1 || u != 1 {
		t.Fatalf("%d wrapkey and %d unwrapkey requests, want 1 and 1", w, u)
	}
	if v.challenges != 1 {
		t.Fatalf("%d challenges, want 1 (the first request)", v.challenges)
	}
	for _, g := range v.got {
		if g["alg"] != "RSA-OAEP-256" {
			t.Fatalf("request with alg %q", g["alg"])
		}
	}
	// without the cache every read asks the vault
	_, nocache := encryptingTable(t, encryption.Config{Key: key, Properties: []string{"Secret"}, KeyCacheSize: -1})
	roundTrip(t, nocache, "r2")
	if u := v.count("unwrapkey"); u != 4 {
		t.Fatalf("%d unwrapkey requests, want 4", u)
	}
}

func TestRoundTripA256KW(t *testing.T) {
	v := newFakeVault(t)
	kid := v.addOct(t, "hsmkey", "v1", 1)
	key, err := NewKey(v.client(t), kid, AlgA256KW)
	if err != nil {
		t.Fatal(err)
	}
	raw, enc := encryptingTable(t, encryption.Config{Key: key, Properties: []string{"Secret"}})
	roundTrip(t, enc, "r1")
	if m := storedMeta(t, raw, "r1"); m["alg"] != AlgA256KW || m["kid"] != kid {
		t.Fatalf("metadata %v", m)
	}
	if _, err := NewKey(v.client(t), kid, AlgRSAOAEP); err == nil {
		t.Fatal("NewKey wraps with RSA-OAEP (SHA-1)")
	}
	if _, err := NewKey(v.client(t), kid, "dir"); err == nil {
		t.Fatal("NewKey took algorithm dir")
	}
}

// TestRotation writes under one key version, then under the next, and
// reads both through a Resolver; Rewrap moves the old entities to the
// new version, and reads go on.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	v := newFakeVault(t)
	c := v.client(t)
	kid1 := v.addRSA(t, "tables", "v1")
	kid2 := v.addOct(t, "tables", "v2", 2) // a rotation may change the key type too
	k1, _ := NewKey(c, kid1, AlgRSAOAEP256)
	k2, _ := NewKey(c, kid2, AlgA256KW)
	res, err := NewResolver(map[string]*azkeys.Client{v.srv.URL: c}, "tables")
	if err != nil {
		t.Fatal(err)
	}
	raw, old := encryptingTable(t, encryption.Config{Key: k1, Properties: []string{"Secret"}})
	roundTrip(t, old, "r1")
	enc, err := encryption.NewTable(raw, encryption.Config{Key: k2, Keys: res, Properties: []string{"Secret"}})
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, enc, "r2")
	if got, err := enc.Get(ctx, "p", "r1", nil); err != nil || got.Properties["Secret"] != plaintext {
		t.Fatalf("old entity: %v, %v", got.Properties, err)
	}
	// the resolver unwraps the RSA version with the algorithm stored
	r, err := encryption.Rewrap(ctx, raw, store.Query{}, res, k2)
	if err != nil || r.Rewrapped != 1 || r.Current != 1 {
		t.Fatalf("Rewrap = %+v, %v", r, err)
	}
	if m := storedMeta(t, raw, "r1"); m["kid"] != kid2 {
		t.Fatalf("rewrapped kid %v", m["kid"])
	}
	if got, err := enc.Get(ctx, "p", "r1", nil); err != nil || got.Properties["Secret"] != plaintext {
		t.Fatalf("rewrapped entity: %v, %v", got.Properties, err)
	}
}

func TestResolverRefusesOtherKeys(t *testing.T) {
	ctx := context.Background()
	v := newFakeVault(t)
	c := v.client(t)
	res, err := NewResolver(map[string]*azkeys.Client{v.srv.URL + "/": c}, "tables")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{
		"https://elsewhere.vault.azure.net/keys/tables/v1", // another vault: never sent a token
		v.srv.URL + "/keys/other/v1",                       // a key not given
		v.srv.URL + "/keys/tables",                         // no version
		"http" + strings.TrimPrefix(v.srv.URL, "https") + "/keys/tables/v1",
		v.srv.URL + "/keys/tables/v1?x=1",
		"not a url",
	} {
		if _, err := res.ResolveKey(ctx, id); !errors.Is(err, encryption.ErrKeyNotFound) {
			t.Errorf("ResolveKey(%q) = %v, want ErrKeyNotFound", id, err)
		}
	}
	if n := v.count("wrapkey") + v.count("unwrapkey"); n != 0 {
		t.Fatalf("%d requests", n)
	}
	k, err := res.ResolveKey(ctx, v.srv.URL+"/keys/tables/v9")
	if err != nil || k.KeyID() != v.srv.URL+"/keys/tables/v9" {
		t.Fatalf("ResolveKey = %v, %v", k, err)
	}
	if _, err := NewResolver(nil); err == nil {
		t.Fatal("NewResolver without a vault")
	}
	if _, err := NewResolver(map[string]*azkeys.Client{"http://x": c}); err == nil {
		t.Fatal("NewResolver took an http vault")
	}
}

// noSecrets fails if msg holds the token, the plaintext or key material.
func noSecrets(t *testing.T, msg string, material ...[]byte) {
	t.Helper()
	for _, s := range []string{testToken, plaintext} {
		if strings.Contains(msg, s) {
			t.Fatalf("error %q reveals %q", msg, s)
		}
	}
	for _, m := range material {
		for _, s := range []string{base64.StdEncoding.EncodeToString(m), base64.RawURLEncoding.EncodeToString(m), fmt.Sprintf("%x", m)} {
			if strings.Contains(msg, s) {
				t.Fatalf("error %q reveals key material", msg)
			}
		}
	}
}

func TestVaultErrors(t *testing.T) {
	ctx := context.Background()
	v := newFakeVault(t)
	c := v.client(t)
	cek := []byte(strings.Repeat("K", 32)) // a TEST content key

	// 403: the identity lacks the permission
	forbidden, _ := NewKey(c, v.srv.URL+"/keys/forbidden/v1", AlgRSAOAEP256)
	_, _, err := forbidden.WrapKey(ctx, cek)
	var ve *Error
	if !errors.As(err, &ve) || ve.StatusCode != http.StatusForbidden || ve.Code != "Forbidden" || ve.Op != "wrapkey" {
		t.Fatalf("WrapKey = %v", err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || errors.Is(err, encryption.ErrKeyNotFound) {
		t.Fatalf("WrapKey = %v: not an azcore.ResponseError, or a key not found", err)
	}
	if !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "permission") || !strings.Contains(err.Error(), "/keys/forbidden/v1") {
		t.Fatalf("unclear error %q", err)
	}
	noSecrets(t, err.Error(), cek)
	ve403 := err
	raw, enc := encryptingTable(t, encryption.Config{Key: forbidden, Properties: []string{"Secret"}})
	_, err = enc.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Secret": plaintext}})
	if !errors.As(err, &ve) {
		t.Fatalf("Insert = %v", err)
	}
	noSecrets(t, err.Error())
	if _, err := raw.Get(ctx, "p", "r", nil); err == nil {
		t.Fatal("the entity was written")
	}

	// 404: a key version that does not exist, on read
	kid := v.addRSA(t, "tables", "v1")
	good, _ := NewKey(c, kid, AlgRSAOAEP256)
	raw, enc = encryptingTable(t, encryption.Config{Key: good, Properties: []string{"Secret"}, KeyCacheSize: -1})
	roundTrip(t, enc, "r")
	v.mu.Lock()
	delete(v.rsa, "tables/v1")
	v.mu.Unlock()
	_, err = enc.Get(ctx, "p", "r", nil)
	if !errors.Is(err, encryption.ErrDecrypt) || !errors.Is(err, encryption.ErrKeyNotFound) || !errors.As(err, &ve) || ve.StatusCode != 404 || ve.Code != "KeyNotFound" || ve.Op != "unwrapkey" {
		t.Fatalf("Get = %v", err)
	}
	if !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), kid) {
		t.Fatalf("unclear error %q", err)
	}
	e, _ := raw.Get(ctx, "p", "r", nil)
	noSecrets(t, err.Error(), e.Properties["Secret"].([]byte))
	ve404 := err

	// a key id that names another key than the one asked
	if _, err := good.UnwrapKey(ctx, []byte{1}, AlgRSAOAEP256, v.srv.URL+"/keys/tables/v2"); !errors.Is(err, encryption.ErrKeyNotFound) {
		t.Fatalf("UnwrapKey of another version = %v", err)
	}
	if _, err := good.UnwrapKey(ctx, []byte{1}, "A128CBC", kid); err == nil {
		t.Fatal("UnwrapKey took algorithm A128CBC")
	}
	// 400: a wrapped key the vault cannot unwrap
	v.addRSA(t, "tables", "v1")
	_, err = good.UnwrapKey(ctx, []byte("not a wrapped key"), AlgRSAOAEP256, kid)
	if !errors.As(err, &ve) || ve.StatusCode != http.StatusBadRequest {
		t.Fatalf("UnwrapKey of garbage = %v", err)
	}
	noSecrets(t, err.Error())
	t.Logf("403: %v\n404: %v\n400: %v", ve403, ve404, err)
}

func TestAlgorithmNames(t *testing.T) {
	for _, alg := range []string{AlgRSAOAEP256, AlgRSAOAEP, AlgA256KW} {
		a, ok := vaultAlgorithm(alg)
		if !ok || string(a) != alg {
			t.Fatalf("vaultAlgorithm(%q) = %q, %v", alg, a, ok)
		}
		back, ok := metadataAlgorithm(a)
		if !ok || back != alg {
			t.Fatalf("metadataAlgorithm(%q) = %q, %v", a, back, ok)
		}
	}
	for _, alg := range []string{"", "RSA1_5", "A128KW", "rsa-oaep-256"} {
		if _, ok := vaultAlgorithm(alg); ok {
			t.Fatalf("vaultAlgorithm(%q) accepted", alg)
		}
	}
	if _, ok := metadataAlgorithm(azkeys.EncryptionAlgorithmRSA15); ok {
		t.Fatal("metadataAlgorithm took RSA1_5")
	}
}

func TestKeyIDs(t *testing.T) {
	for _, id := range []string{"", "https://v.vault.azure.net/keys/k", "https://v.vault.azure.net/secrets/k/1", "http://v.vault.azure.net/keys/k/1",
		"https://v.vault.azure.net/keys/k/1/extra", "https://u:p@v.vault.azure.net/keys/k/1"} {
		if _, err := parseKeyID(id); err == nil {
			t.Errorf("parseKeyID(%q) accepted", id)
		}
	}
	id, err := parseKeyID("https://V.vault.azure.net/keys/k/1")
	if err != nil || id.String() != "https://v.vault.azure.net/keys/k/1" {
		t.Fatalf("parseKeyID = %v, %v", id, err)
	}
}
