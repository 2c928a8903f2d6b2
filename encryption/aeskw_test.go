package encryption

import (
	"bytes"
	"context"
	"crypto/aes"
	"encoding/hex"
	"errors"
	"testing"
)

// The known-answer tests of RFC 3394, section 4 (4.1 to 4.6): the
// key-encryption key is the first 16, 24 or 32 bytes of 000102...1F and
// the key data the first 16, 24 or 32 bytes of
// 00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F.
func TestAESKeyWrapRFC3394(t *testing.T) {
	kek := unhex(t, "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F")
	data := unhex(t, "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F")
	cases := []struct {
		name         string
		kekLen, dLen int
		wrapped      string
	}{
		{"4.1 128 bits of key data, 128-bit KEK", 16, 16, "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5"},
		{"4.2 128 bits of key data, 192-bit KEK", 24, 16, "96778B25AE6CA435F92B5B97C050AED2468AB8A17AD84E5D"},
		{"4.3 128 bits of key data, 256-bit KEK", 32, 16, "64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7"},
		{"4.4 192 bits of key data, 192-bit KEK", 24, 24, "031D33264E15D33268F24EC260743EDCE1C6C7DDEE725A936BA814915C6762D2"},
		{"4.5 192 bits of key data, 256-bit KEK", 32, 24, "A8F9BC1612C68B3FF6E6F4FBE30E71E4769C8B80A32CB8958CD5D17D6B254DA1"},
		{"4.6 256 bits of key data, 256-bit KEK", 32, 32, "28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43BFB988B9B7A02DD21"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := aes.NewCipher(kek[:c.kekLen])
			if err != nil {
				t.Fatal(err)
			}
			want := unhex(t, c.wrapped)
			got, err := wrapAESKW(b, data[:c.dLen])
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("wrap = %X, %v; want %X", got, err, want)
			}
			back, err := unwrapAESKW(b, want)
			if err != nil || !bytes.Equal(back, data[:c.dLen]) {
				t.Fatalf("unwrap = %X, %v", back, err)
			}
			for i := range want {
				bad := bytes.Clone(want)
				bad[i] ^= 1
				if _, err := unwrapAESKW(b, bad); err == nil {
					t.Fatalf("unwrap accepted a change in byte %d", i)
				}
			}
		})
	}
}

func TestLocalKey(t *testing.T) {
	ctx := context.Background()
	k := testKey(t, "k1", 1)
	other := testKey(t, "k1", 2) // same id, different key
	cek := bytes.Repeat([]byte{7}, 32)
	w, alg, err := k.WrapKey(ctx, cek)
	if err != nil || alg != AlgA256KW || len(w) != 40 {
		t.Fatalf("WrapKey = %x, %q, %v", w, alg, err)
	}
	if got, err := k.UnwrapKey(ctx, w, alg, "k1"); err != nil || !bytes.Equal(got, cek) {
		t.Fatalf("UnwrapKey = %x, %v", got, err)
	}
	if _, err := other.UnwrapKey(ctx, w, alg, "k1"); err == nil {
		t.Fatal("a wrong key unwrapped")
	}
	if _, err := k.UnwrapKey(ctx, w, alg, "k2"); !errors.Is(err, ErrKeyNotFound) {
		t.Fatalf("another key id: %v", err)
	}
	if _, err := k.UnwrapKey(ctx, w, "RSA-OAEP", "k1"); err == nil {
		t.Fatal("another algorithm unwrapped")
	}
	if _, err := NewLocalKey("k", make([]byte, 20)); err == nil {
		t.Fatal("a 20-byte key was accepted")
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testKey is a LocalKey over a fixed TEST key (32 bytes of seed): never
// a real key.
func testKey(t testing.TB, id string, seed byte) *LocalKey {
	t.Helper()
	k, err := NewLocalKey(id, bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
