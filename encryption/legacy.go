package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The legacy format: table encryption 1.0 of the WindowsAzure.Storage
// client libraries (.NET, Java, Python), AES-CBC-256 without
// authentication. Read for data those libraries wrote; written only when
// Config.Legacy asks for it.
//
// An entity carries two reserved properties:
//
//   - _ClientEncryptionMetadata1, a string of JSON:
//     {"WrappedContentKey":{"KeyId":..,"EncryptedKey":"<base64>","Algorithm":"A256KW"},
//     "EncryptionAgent":{"Protocol":"1.0","EncryptionAlgorithm":"AES_CBC_256"},
//     "ContentEncryptionIV":"<base64 of 16 bytes>",
//     "KeyWrappingMetadata":{"EncryptionLibrary":".NET 9.3.1"}}
//     (a .NET build for .NET Core wrote the algorithm as the number 0);
//   - _ClientEncryptionMetadata2, binary: the names of the encrypted
//     properties, a JSON array of strings, encrypted like a property
//     named _ClientEncryptionMetadata2.
//
// A property is encrypted with AES-256 in CBC mode with PKCS#7 padding
// under the entity's content key, over the UTF-8 bytes of its string
// value (only strings could be encrypted), and stored as Edm.Binary. Its
// IV is the first 16 bytes of SHA-256(ContentEncryptionIV ||
// UTF-8(RowKey + PartitionKey + name)). The Java library's first version
// concatenated PartitionKey + RowKey + name instead and wrote the name
// list as Java prints a set ("[a, b]"); a reader recognises its data by
// KeyWrappingMetadata being absent or naming a Java library, as the .NET
// reader does.

type legacyData struct {
	WrappedContentKey struct {
		KeyID        string `json:"KeyId"`
		EncryptedKey []byte `json:"EncryptedKey"`
		Algorithm    string `json:"Algorithm"`
	} `json:"WrappedContentKey"`
	EncryptionAgent struct {
		Protocol            string          `json:"Protocol"`
		EncryptionAlgorithm json.RawMessage `json:"EncryptionAlgorithm"`
	} `json:"EncryptionAgent"`
	ContentEncryptionIV []byte            `json:"ContentEncryptionIV"`
	KeyWrappingMetadata map[string]string `json:"KeyWrappingMetadata"`
}

// legacyLibrary is what a legacy entity written here names as its writer.
const legacyLibrary = "Go tablekit"

// legacyIV derives the IV of property name of entity (pk, rk).
func legacyIV(iv []byte, pk, rk, name string, javaV1 bool) []byte {
	h := sha256.New()
	h.Write(iv)
	if javaV1 {
		io.WriteString(h, pk)
		io.WriteString(h, rk)
	} else {
		io.WriteString(h, rk)
		io.WriteString(h, pk)
	}
	io.WriteString(h, name)
	return h.Sum(nil)[:aes.BlockSize]
}

func cbcEncrypt(block cipher.Block, iv, pt []byte) []byte {
	pad := aes.BlockSize - len(pt)%aes.BlockSize
	buf := make([]byte, len(pt)+pad)
	copy(buf, pt)
	for i := len(pt); i < len(buf); i++ {
		buf[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf, buf)
	return buf
}

var errLegacyCiphertext = errors.New("bad ciphertext")

// cbcDecrypt decrypts and unpads; every failure is one error, so that a
// caller cannot tell a padding failure from another.
func cbcDecrypt(block cipher.Block, iv, ct []byte) ([]byte, error) {
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, errLegacyCiphertext
	}
	buf := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(buf, ct)
	pad := int(buf[len(buf)-1])
	bad := 0
	if pad == 0 || pad > aes.BlockSize {
		bad = 1
		pad = 1
	}
	for _, b := range buf[len(buf)-pad:] {
		if int(b) != pad {
			bad = 1
		}
	}
	if bad != 0 {
		clear(buf)
		return nil, errLegacyCiphertext
	}
	return buf[:len(buf)-pad], nil
}

// legacySealer writes one entity in the legacy format.
type legacySealer struct {
	block cipher.Block
	iv    []byte
	meta  string
	names []byte // _ClientEncryptionMetadata2's value
}

func newLegacySealer(c *Codec, cek, wk []byte, alg, pk, rk string) (*legacySealer, error) {
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	s := &legacySealer{block: block, iv: make([]byte, aes.BlockSize)}
	if _, err := io.ReadFull(c.rand, s.iv); err != nil {
		return nil, fmt.Errorf("encryption: reading random bytes: %w", err)
	}
	var d legacyData
	d.WrappedContentKey.KeyID = c.key.KeyID()
	d.WrappedContentKey.EncryptedKey = wk
	d.WrappedContentKey.Algorithm = alg
	d.EncryptionAgent.Protocol = "1.0"
	d.EncryptionAgent.EncryptionAlgorithm = json.RawMessage(`"AES_CBC_256"`)
	d.ContentEncryptionIV = s.iv
	d.KeyWrappingMetadata = map[string]string{"EncryptionLibrary": legacyLibrary}
	meta, err := json.Marshal(&d)
	if err != nil {
		return nil, err
	}
	s.meta = string(meta)
	list, err := json.Marshal(c.props)
	if err != nil {
		return nil, err
	}
	s.names = cbcEncrypt(block, legacyIV(s.iv, pk, rk, LegacyPropertiesProperty, false), list)
	return s, nil
}

func (s *legacySealer) seal(pk, rk, name, v string) ([]byte, error) {
	return cbcEncrypt(s.block, legacyIV(s.iv, pk, rk, name, false), []byte(v)), nil
}

func (d *decReader) flushLegacy() error {
	var m legacyData
	if err := json.Unmarshal([]byte(d.leg1), &m); err != nil {
		return d.fail("", LegacyMetadataProperty+" is not valid JSON", nil)
	}
	if m.EncryptionAgent.Protocol != "1.0" {
		return d.fail("", fmt.Sprintf("legacy encryption protocol %q is not 1.0", m.EncryptionAgent.Protocol), nil)
	}
	switch alg := strings.TrimSpace(string(m.EncryptionAgent.EncryptionAlgorithm)); alg {
	case `"AES_CBC_256"`, "0":
	default:
		return d.fail("", fmt.Sprintf("legacy encryption algorithm %s is not AES_CBC_256", alg), nil)
	}
	if len(m.ContentEncryptionIV) != aes.BlockSize || len(m.WrappedContentKey.EncryptedKey) == 0 {
		return d.fail("", LegacyMetadataProperty+" lacks the IV or the wrapped key", nil)
	}
	javaV1 := m.KeyWrappingMetadata == nil || strings.Contains(m.KeyWrappingMetadata["EncryptionLibrary"], "Java")
	wk := &m.WrappedContentKey
	kw, err := d.c.keys.ResolveKey(d.ctx, wk.KeyID)
	if err != nil {
		return d.fail("", "no key to unwrap the content key", err)
	}
	cek, err := kw.UnwrapKey(d.ctx, wk.EncryptedKey, wk.Algorithm, wk.KeyID)
	if err != nil {
		return d.fail("", "the content key does not unwrap", err)
	}
	if len(cek) != cekSize {
		clear(cek)
		return d.fail("", "the content key has the wrong size", nil)
	}
	block, err := aes.NewCipher(cek)
	clear(cek)
	if err != nil {
		return d.fail("", "the content key", err)
	}
	list, err := cbcDecrypt(block, legacyIV(m.ContentEncryptionIV, d.pk, d.rk, LegacyPropertiesProperty, javaV1), d.leg2)
	if err != nil {
		return d.fail(LegacyPropertiesProperty, "the list of encrypted properties does not decrypt", nil)
	}
	names, ok := parseLegacyList(list, javaV1)
	if !ok {
		return d.fail(LegacyPropertiesProperty, "the list of encrypted properties is malformed", nil)
	}
	for _, b := range d.bins {
		if _, listed := names[b.name]; !listed {
			if d.c.encrypted(b.name) {
				return d.fail(b.name, "the property is not listed as encrypted", nil)
			}
			if err := d.r.SetBinary(b.name, b.v); err != nil {
				return err
			}
			continue
		}
		pt, err := cbcDecrypt(block, legacyIV(m.ContentEncryptionIV, d.pk, d.rk, b.name, javaV1), b.v)
		if err != nil {
			return d.fail(b.name, "the legacy ciphertext does not decrypt", nil)
		}
		if err := d.r.SetString(b.name, strings.ToValidUTF8(string(pt), "\uFFFD")); err != nil {
			return err
		}
		clear(pt)
	}
	return nil
}

// parseLegacyList reads the decrypted list of encrypted property names:
// a JSON array, or for Java v1 the set as Java prints it, "[a, b]".
func parseLegacyList(b []byte, javaV1 bool) (map[string]struct{}, bool) {
	out := map[string]struct{}{}
	if javaV1 {
		if len(b) < 2 {
			return nil, false
		}
		for _, f := range bytes.FieldsFunc(b[1:len(b)-1], func(r rune) bool { return r == ',' || r == ' ' }) {
			out[string(f)] = struct{}{}
		}
		return out, true
	}
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return nil, false
	}
	for _, n := range names {
		out[n] = struct{}{}
	}
	return out, true
}
