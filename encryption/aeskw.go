package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// AES key wrap (RFC 3394, section 2.2), written from the RFC: the key
// data is n 64-bit blocks P1..Pn, the integrity check value A starts as
// the default initial value A6A6A6A6A6A6A6A6, and six passes of n steps
// each encrypt A || Ri with the key-encryption key, XOR the step counter
// t = n*j+i into A and keep the low half as the new Ri. Unwrapping runs
// the steps backwards and checks A against the initial value.

// defaultIV is the RFC 3394 initial value (section 2.2.3.1).
var defaultIV = [8]byte{0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6}

var errKeyWrapInput = errors.New("key data for AES key wrap must be a multiple of 8 bytes, at least 16")

// wrapAESKW wraps plaintext (at least two 64-bit blocks) under block, the
// key-encryption key, and returns the n+1 blocks of ciphertext.
func wrapAESKW(block cipher.Block, plaintext []byte) ([]byte, error) {
	if len(plaintext) < 16 || len(plaintext)%8 != 0 {
		return nil, errKeyWrapInput
	}
	n := len(plaintext) / 8
	out := make([]byte, 8+len(plaintext))
	copy(out[:8], defaultIV[:])
	copy(out[8:], plaintext)
	var b [aes.BlockSize]byte
	for j := range 6 {
		for i := 1; i <= n; i++ {
			// B = AES(K, A | R[i])
			copy(b[:8], out[:8])
			copy(b[8:], out[8*i:8*i+8])
			block.Encrypt(b[:], b[:])
			// A = MSB(64, B) ^ t where t = (n*j)+i
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(out[:8], binary.BigEndian.Uint64(b[:8])^t)
			// R[i] = LSB(64, B)
			copy(out[8*i:8*i+8], b[8:])
		}
	}
	return out, nil
}

// unwrapAESKW reverses wrapAESKW and checks the integrity value; any
// mismatch (a wrong key, a changed byte) is one error that says nothing
// about the key data.
func unwrapAESKW(block cipher.Block, ciphertext []byte) ([]byte, error) {
	if len(ciphertext) < 24 || len(ciphertext)%8 != 0 {
		return nil, errKeyWrapInput
	}
	n := len(ciphertext)/8 - 1
	var a [8]byte
	copy(a[:], ciphertext[:8])
	r := make([]byte, 8*n)
	copy(r, ciphertext[8:])
	var b [aes.BlockSize]byte
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			// B = AES-1(K, (A ^ t) | R[i]) where t = n*j+i
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(a[:])^t)
			copy(b[8:], r[8*(i-1):8*i])
			block.Decrypt(b[:], b[:])
			copy(a[:], b[:8])
			copy(r[8*(i-1):8*i], b[8:])
		}
	}
	if subtle.ConstantTimeCompare(a[:], defaultIV[:]) != 1 {
		clear(r)
		return nil, errUnwrap
	}
	return r, nil
}

var errUnwrap = errors.New("the wrapped key fails its integrity check (wrong key-encryption key, or changed data)")
