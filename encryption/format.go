package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/store"
)

// The authenticated format, version 1.
//
// An entity written with encrypted properties carries one reserved string
// property, MetadataProperty ("TkEnc"), holding JSON:
//
//	{"v":1,"enc":"A256GCM","kid":"<key id>","alg":"A256KW","wk":"<base64 wrapped key>","p":["Name",...]}
//
// kid and alg name the key-encryption key and its algorithm, wk is the
// entity's content key (32 random bytes, fresh for every write) wrapped by
// it, and p lists the properties the writer was told to encrypt. Each
// encrypted property is stored under its own name as Edm.Binary:
//
//	0x01 | nonce (12 random bytes) | AES-256-GCM(type | value) with its 16-byte tag
//
// where type is one byte naming the EDM type (so the service does not see
// it) and value is the value's encoding (valueBytes). The additional data
// binds the ciphertext to its place: the table's name in lower case (the
// service's table names are case-insensitive), the PartitionKey, the RowKey
// and the property's name, each preceded by its length. A value copied to
// another row, table or property fails the tag check.

// MetadataProperty is the reserved property of the authenticated format.
// Tables that encrypt must not use it for anything else.
const MetadataProperty = "TkEnc"

// Names of the legacy format's reserved properties.
const (
	LegacyMetadataProperty   = "_ClientEncryptionMetadata1"
	LegacyPropertiesProperty = "_ClientEncryptionMetadata2"
)

const (
	formatVersion = 1
	encGCM        = "A256GCM"
	cipherV1      = 0x01
	nonceSize     = 12
	tagSize       = 16
	cekSize       = 32
	aadPrefix     = "tablekit/TkEnc/1"
)

// ErrDecrypt matches every refusal to decrypt: a changed or moved
// ciphertext, a wrong key, missing or malformed metadata, a property
// stored unencrypted where an encrypted one is expected. Its messages name
// the table, the entity's keys and the property, never a value or a key.
var ErrDecrypt = errors.New("encryption: cannot decrypt")

// DecryptError is the error of a refused decryption. It matches ErrDecrypt.
type DecryptError struct {
	Table        string
	PartitionKey string
	RowKey       string
	// Property is the property that failed, "" for the entity's metadata.
	Property string
	// Reason says what failed, in words that reveal no secret.
	Reason string
	// Err is the cause, if any: a key resolver's or wrapper's error.
	Err error
}

func (e *DecryptError) Error() string {
	var b strings.Builder
	b.WriteString("encryption: cannot decrypt entity (")
	b.WriteString(strconv.Quote(trunc(e.PartitionKey)))
	b.WriteString(", ")
	b.WriteString(strconv.Quote(trunc(e.RowKey)))
	b.WriteString(") of table ")
	b.WriteString(e.Table)
	if e.Property != "" {
		b.WriteString(", property ")
		b.WriteString(e.Property)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is reports whether target is ErrDecrypt.
func (e *DecryptError) Is(target error) bool { return target == ErrDecrypt }

// Unwrap returns the cause.
func (e *DecryptError) Unwrap() error { return e.Err }

func trunc(s string) string {
	if len(s) <= 64 {
		return s
	}
	i := 64
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// invalid is a refusal of the caller's input, matching store.ErrInvalidInput.
func invalid(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "encryption: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// metadata is the JSON of MetadataProperty.
type metadata struct {
	V     int      `json:"v"`
	Enc   string   `json:"enc"`
	KeyID string   `json:"kid"`
	Alg   string   `json:"alg"`
	WK    []byte   `json:"wk"`
	Props []string `json:"p"`
}

// appendMetadata writes m as JSON, in the field order of the struct.
func appendMetadata(b []byte, m *metadata) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(m.V), 10)
	b = append(b, `,"enc":`...)
	b = appendJSONString(b, m.Enc)
	b = append(b, `,"kid":`...)
	b = appendJSONString(b, m.KeyID)
	b = append(b, `,"alg":`...)
	b = appendJSONString(b, m.Alg)
	b = append(b, `,"wk":"`...)
	b = base64.StdEncoding.AppendEncode(b, m.WK)
	b = append(b, `","p":[`...)
	for i, p := range m.Props {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, p)
	}
	return append(b, "]}"...)
}

// metadataSize is the length of appendMetadata's output for m when its
// strings need no escapes, a capacity for it.
func metadataSize(m *metadata) int {
	n := 64 + len(m.Enc) + len(m.KeyID) + len(m.Alg) + base64.StdEncoding.EncodedLen(len(m.WK))
	for _, p := range m.Props {
		n += len(p) + 3
	}
	return n
}

func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func parseMetadata(s string) (*metadata, error) {
	var m metadata
	if err := m.parse(s, nil); err != nil {
		return nil, err
	}
	return &m, nil
}

// parse reads the metadata s into m. The metadata this library writes is
// read by a hand-written scanner whose strings share s and whose wrapped
// key is decoded into wk's space (appended to wk[:0]); anything else, such
// as JSON with spaces, escapes or another member order, goes through
// encoding/json, so that both read the same documents alike.
func (m *metadata) parse(s string, wk []byte) error {
	props := m.Props[:0]
	*m = metadata{}
	if !m.scan(s, wk[:0], props) {
		*m = metadata{}
		if err := json.Unmarshal([]byte(s), m); err != nil {
			return errors.New("metadata is not valid JSON")
		}
	}
	return m.check()
}

// check refuses metadata this library cannot read.
func (m *metadata) check() error {
	if m.V != formatVersion {
		return fmt.Errorf("metadata version %d is not one this library reads (1)", m.V)
	}
	if m.Enc != encGCM {
		return fmt.Errorf("content algorithm %q is not %s", m.Enc, encGCM)
	}
	if m.KeyID == "" || m.Alg == "" || len(m.WK) == 0 {
		return errors.New("metadata lacks the key id, algorithm or wrapped key")
	}
	return nil
}

// scan reads s in the exact form appendMetadata writes, with strings
// free of escapes and of bytes outside printable ASCII; it reports false
// for anything else.
func (m *metadata) scan(s string, wk []byte, props []string) bool {
	lit := func(l string) bool {
		if !strings.HasPrefix(s, l) {
			return false
		}
		s = s[len(l):]
		return true
	}
	// str reads a plain string up to its closing quote, which it consumes.
	str := func() (string, bool) {
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"':
				v := s[:i]
				s = s[i+1:]
				return v, true
			case c < 0x20 || c == '\\' || c >= 0x7f:
				return "", false
			}
		}
		return "", false
	}
	if !lit(`{"v":`) {
		return false
	}
	n := 0
	for n < len(s) && n < 9 && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	if n == 0 || (s[0] == '0' && n > 1) {
		return false
	}
	v, err := strconv.Atoi(s[:n])
	if err != nil {
		return false
	}
	m.V = v
	s = s[n:]
	var ok bool
	if !lit(`,"enc":"`) {
		return false
	}
	if m.Enc, ok = str(); !ok || !lit(`,"kid":"`) {
		return false
	}
	if m.KeyID, ok = str(); !ok || !lit(`,"alg":"`) {
		return false
	}
	if m.Alg, ok = str(); !ok || !lit(`,"wk":"`) {
		return false
	}
	b64, ok := str()
	if !ok {
		return false
	}
	if wk, ok = appendBase64(wk, b64); !ok {
		return false
	}
	m.WK = wk
	if !lit(`,"p":[`) {
		return false
	}
	for !lit("]}") {
		if len(props) > 0 && !lit(",") {
			return false
		}
		if !lit(`"`) {
			return false
		}
		p, ok := str()
		if !ok {
			return false
		}
		props = append(props, p)
	}
	m.Props = props
	return s == ""
}

var base64Index = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// appendBase64 appends the bytes of s, padded standard base64 with zero
// trailing bits (what base64.StdEncoding writes), to b; it reports false
// for anything else, which the caller hands to encoding/json.
func appendBase64(b []byte, s string) ([]byte, bool) {
	if len(s)%4 != 0 {
		return b, false
	}
	for len(s) > 0 {
		var q [4]byte
		pad := 0
		for i := range 4 {
			c := s[i]
			if c == '=' && len(s) == 4 && i >= 2 && (i == 3 || s[3] == '=') {
				pad++
				continue
			}
			if q[i] = base64Index[c]; q[i] == 0xff || pad > 0 {
				return b, false
			}
		}
		v := uint32(q[0])<<18 | uint32(q[1])<<12 | uint32(q[2])<<6 | uint32(q[3])
		switch pad {
		case 0:
			b = append(b, byte(v>>16), byte(v>>8), byte(v))
		case 1:
			if v&0xff != 0 {
				return b, false
			}
			b = append(b, byte(v>>16), byte(v>>8))
		case 2:
			if v&0xffff != 0 {
				return b, false
			}
			b = append(b, byte(v>>16))
		}
		s = s[4:]
	}
	return b, true
}

// aad is the additional data of one property: what binds its ciphertext
// to the table, the entity and the property.
func aad(buf []byte, table, pk, rk, name string) []byte {
	buf = append(buf, aadPrefix...)
	buf = binary.AppendUvarint(buf, uint64(len(table)))
	for i := 0; i < len(table); i++ { // table names are ASCII letters and digits
		c := table[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	buf = binary.AppendUvarint(buf, uint64(len(pk)))
	buf = append(buf, pk...)
	buf = binary.AppendUvarint(buf, uint64(len(rk)))
	buf = append(buf, rk...)
	buf = binary.AppendUvarint(buf, uint64(len(name)))
	return append(buf, name...)
}

func newGCM(cek []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// EDM type codes inside the plaintext.
const (
	tString byte = 1 + iota
	tBinary
	tBool
	tInt32
	tInt64
	tDouble
	tTime
	tGUID
)

// appendValue appends the type code and the encoding of v (a value of the
// closed set, already validated) to b.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case string:
		b = append(b, tString)
		return append(b, x...)
	case []byte:
		b = append(b, tBinary)
		return append(b, x...)
	case bool:
		if x {
			return append(b, tBool, 1)
		}
		return append(b, tBool, 0)
	case int32:
		return binary.BigEndian.AppendUint32(append(b, tInt32), uint32(x))
	case int64:
		return binary.BigEndian.AppendUint64(append(b, tInt64), uint64(x))
	case float64:
		return binary.BigEndian.AppendUint64(append(b, tDouble), math.Float64bits(store.NormalizeDouble(x)))
	case time.Time:
		t := store.NormalizeTime(x)
		b = binary.BigEndian.AppendUint64(append(b, tTime), uint64(t.Unix()))
		return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
	case store.GUID:
		b = append(b, tGUID)
		return append(b, x[:]...)
	}
	panic(fmt.Sprintf("encryption: value of type %T", v))
}

// valueSize is the length appendValue appends for v.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return 1 + len(x)
	case []byte:
		return 1 + len(x)
	case bool:
		return 2
	case int32:
		return 5
	case int64, float64:
		return 9
	case time.Time:
		return 13
	case store.GUID:
		return 17
	}
	return 32
}

// readValue reverses appendValue and hands the value of property name
// to r through its typed setter, without boxing it in an interface; a
// binary value shares p. ok is false for a malformed plaintext, and err
// is r's error.
func readValue(r store.EntityReader, name string, p []byte) (ok bool, err error) {
	if len(p) == 0 {
		return false, nil
	}
	t, p := p[0], p[1:]
	switch t {
	case tString:
		if !utf8.Valid(p) {
			return false, nil
		}
		return true, r.SetString(name, string(p))
	case tBinary:
		return true, r.SetBinary(name, p)
	case tBool:
		if len(p) == 1 && p[0] <= 1 {
			return true, r.SetBool(name, p[0] == 1)
		}
	case tInt32:
		if len(p) == 4 {
			return true, r.SetInt32(name, int32(binary.BigEndian.Uint32(p)))
		}
	case tInt64:
		if len(p) == 8 {
			return true, r.SetInt64(name, int64(binary.BigEndian.Uint64(p)))
		}
	case tDouble:
		if len(p) == 8 {
			return true, r.SetDouble(name, math.Float64frombits(binary.BigEndian.Uint64(p)))
		}
	case tTime:
		if len(p) == 12 {
			ns := binary.BigEndian.Uint32(p[8:])
			if ns < 1e9 {
				return true, r.SetTime(name, time.Unix(int64(binary.BigEndian.Uint64(p)), int64(ns)).UTC())
			}
		}
	case tGUID:
		if len(p) == 16 {
			return true, r.SetGUID(name, store.GUID(p))
		}
	}
	return false, nil
}
