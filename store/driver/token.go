package driver

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"hash/fnv"
	"strings"
)

// Continuation tokens are opaque to callers. Backends make them with
// SealToken and read them with OpenToken, which bind a token to the query
// it continues and detect damage:
//
//	prefix + base64url(part NUL part ... | scope (8 bytes) | CRC-32 (4 bytes))
//
// The scope is a hash of what the query was over (the table, in any
// letter case, and the exact $filter text; for a table listing, the name
// prefix). A token presented with another table or filter would resume at
// a key that means nothing to that query and silently skip rows, so it is
// refused; so is a token whose bytes were changed or cut, instead of being
// read as "no more results". The parts must not contain NUL.

// TokenScope is the scope of an entity query: the table and the filter.
func TokenScope(table, filter string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(table)))
	h.Write([]byte{0})
	h.Write([]byte(filter))
	return h.Sum64()
}

// SealToken makes a continuation token of the parts for a query of the
// given scope.
func SealToken(prefix string, scope uint64, parts ...string) string {
	raw := []byte(strings.Join(parts, "\x00"))
	raw = binary.BigEndian.AppendUint64(raw, scope)
	raw = binary.BigEndian.AppendUint32(raw, crc32.ChecksumIEEE(raw))
	return prefix + base64.RawURLEncoding.EncodeToString(raw)
}

// OpenToken reads a token SealToken made with this prefix and n parts,
// and checks that it belongs to a query of this scope. Every refusal is
// InvalidInput naming what is wrong.
func OpenToken(tok, prefix string, scope uint64, n int) ([]string, error) {
	body, ok := strings.CutPrefix(tok, prefix)
	if !ok {
		return nil, invalid("continuation token %s is not one this store issued", quoteTrunc(tok))
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < 12 {
		return nil, invalid("continuation token %s is damaged or cut short", quoteTrunc(tok))
	}
	sum := binary.BigEndian.Uint32(raw[len(raw)-4:])
	raw = raw[:len(raw)-4]
	if crc32.ChecksumIEEE(raw) != sum {
		return nil, invalid("continuation token %s is damaged or cut short (its checksum does not match)", quoteTrunc(tok))
	}
	if binary.BigEndian.Uint64(raw[len(raw)-8:]) != scope {
		return nil, invalid(
			"continuation token %s belongs to another query: a token continues only the table and $filter it came from", quoteTrunc(tok))
	}
	parts := strings.Split(string(raw[:len(raw)-8]), "\x00")
	if len(parts) != n {
		return nil, invalid("continuation token %s is not one this store issued", quoteTrunc(tok))
	}
	return parts, nil
}
