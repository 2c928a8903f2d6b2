package encryption

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// The .NET and Java legacy SDKs publish no test vectors with fixed keys
// (their table encryption tests draw random keys and run against the
// service, with nothing recorded); the entities the Python library's
// recorded tests wrote are in legacy_vectors_test.go. These cover the
// forms those do not (the .NET library's metadata, the Java v1 key order
// and list) and were constructed by following the
// WindowsAzure.Storage .NET source (TableEncryptionPolicy.EncryptEntity
// and DecryptMetadataAndReturnCEK, TableOperationHttpResponseParsers'
// ParseEncryptedPropertyDetailsSet) step by step with an independent
// implementation (Python's cryptography package), not with this package:
//
//	TEST key-encryption key  = 00 01 02 ... 1F, id "test-kek-1"
//	TEST content key         = 40 41 42 ... 5F
//	ContentEncryptionIV      = 80 81 82 ... 8F
//	EncryptedKey             = AES key wrap (RFC 3394) of the content key
//	property IV              = SHA-256(IV || UTF-8(RowKey+PartitionKey+name))[:16]
//	                           (Java v1: PartitionKey+RowKey+name)
//	value                    = AES-256-CBC, PKCS#7, of the UTF-8 string
//	_ClientEncryptionMetadata2 = the same, of ["Secret","Note"]
//	                           (Java v1: of "[Secret, Note]")
//
// for PartitionKey "pk1", RowKey "rk1", Secret = "hello legacy" and
// Note = "žluťoučký kůň".
const (
	legacyWrappedKey = "vSonaujHRkx+izlmdKxuDpVYyExgCbP6QTzwameiAII+TXIN8kGfqQ=="
	legacyIVB64      = "gIGCg4SFhoeIiYqLjI2Ojw=="
	netList          = "cldMI9WKi3mCoDxDdDLcV0A9UjNiS+PF6wR7KM3EE70="
	netSecret        = "O2ZyBraZ4s8VDsSnRrFpFw=="
	netNote          = "P6/eI58R+fpUC2KmtcO0NZcdzG9d/rn6OHF+8iW7tTg="
	javaList         = "9/wfNKuZDie1Jzbc08zGTg=="
	javaSecret       = "sRr4fjBO3rE6l86erBwUfg=="
	javaNote         = "KEgtyPC/2UW89ov0Qp26aGnAXudx8AJT4MigJSNYYgk="
)

func legacyKEK(t *testing.T) *LocalKey {
	kek := make([]byte, 32)
	for i := range kek {
		kek[i] = byte(i)
	}
	k, err := NewLocalKey("test-kek-1", kek)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func b64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func legacyEntity(t *testing.T, java bool) store.Entity {
	meta := `{"WrappedContentKey":{"KeyId":"test-kek-1","EncryptedKey":"` + legacyWrappedKey + `","Algorithm":"A256KW"},` +
		`"EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},"ContentEncryptionIV":"` + legacyIVB64 + `"`
	list, s, n := netList, netSecret, netNote
	if java {
		list, s, n = javaList, javaSecret, javaNote
		meta += `}`
	} else {
		meta += `,"KeyWrappingMetadata":{"EncryptionLibrary":".NET 9.3.1"}}`
	}
	return store.Entity{PartitionKey: "pk1", RowKey: "rk1", Properties: map[string]any{
		LegacyMetadataProperty:   meta,
		LegacyPropertiesProperty: b64(t, list),
		"Secret":                 b64(t, s),
		"Note":                   b64(t, n),
		"Plain":                  "as is",
	}}
}

func TestLegacyKnownAnswers(t *testing.T) {
	ctx := context.Background()
	for _, java := range []bool{false, true} {
		name := ".NET"
		if java {
			name = "Java v1"
		}
		t.Run(name, func(t *testing.T) {
			c, err := NewCodec(Config{Key: legacyKEK(t)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Decrypt(ctx, "anytable", legacyEntity(t, java))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"Secret": "hello legacy", "Note": "žluťoučký kůň", "Plain": "as is"}
			if len(got.Properties) != len(want) {
				t.Fatalf("got %v", got.Properties)
			}
			for k, v := range want {
				if got.Properties[k] != v {
					t.Fatalf("%s = %q, want %q", k, got.Properties[k], v)
				}
			}
			// The legacy format binds no table: only the keys.
			e := legacyEntity(t, java)
			e.RowKey = "rk2"
			_, err = c.Decrypt(ctx, "anytable", e)
			refused(t, "moved legacy entity", err)
			e = legacyEntity(t, java)
			e.Properties["Secret"].([]byte)[0] ^= 1
			if got, err := c.Decrypt(ctx, "anytable", e); err == nil && got.Properties["Secret"] == "hello legacy" {
				t.Fatal("a changed legacy ciphertext decrypted to the original")
			}
		})
	}
}

func TestLegacyWriteReadsBack(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	_ = ms.CreateTable(ctx, "Legacy")
	raw := ms.Table("Legacy")
	k := legacyKEK(t)
	w, err := NewTable(raw, Config{Key: k, Properties: []string{"Note", "Secret"}, Legacy: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Insert(ctx, store.Entity{PartitionKey: "pk1", RowKey: "rk1", Properties: map[string]any{"Secret": "hello legacy", "Note": "n"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.(store.TypedTable).Write(ctx, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: "pk1", RowKey: "rk2"},
		Source: mapSource{"Secret": "typed", "Zed": "z"}}); err != nil {
		t.Fatal(err)
	}
	stored, _ := raw.Get(ctx, "pk1", "rk1", nil)
	if _, ok := stored.Properties[LegacyMetadataProperty].(string); !ok {
		t.Fatalf("no %s: %v", LegacyMetadataProperty, stored.Properties)
	}
	if _, ok := stored.Properties[MetadataProperty]; ok {
		t.Fatal("the legacy writer wrote the authenticated metadata")
	}
	// Read with a reader configured for nothing: the stored list names
	// the encrypted properties, as the .NET reader expects.
	r, _ := NewTable(raw, Config{Key: k})
	for rk, want := range map[string]string{"rk1": "hello legacy", "rk2": "typed"} {
		got, err := r.Get(ctx, "pk1", rk, nil)
		if err != nil || got.Properties["Secret"] != want {
			t.Fatalf("%s: %v, %v", rk, got.Properties, err)
		}
	}
	_, err = w.Insert(ctx, store.Entity{PartitionKey: "pk1", RowKey: "rk3", Properties: map[string]any{"Secret": int32(1)}})
	if !errors.Is(err, store.ErrInvalidInput) {
		t.Fatalf("a legacy int32: %v", err)
	}
}
