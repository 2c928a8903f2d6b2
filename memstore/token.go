package memstore

import (
	"encoding/base64"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// Continuation tokens are opaque to callers. Inside, an entity token is the
// key of the next entity to examine, and a table token the next table name;
// keys cannot hold control characters, so NUL separates them safely.

const (
	entityTokenPrefix = "e1."
	tableTokenPrefix  = "t1."
)

func encodeEntityToken(pk, rk string) string {
	return entityTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(pk+"\x00"+rk))
}

func decodeEntityToken(tok string) (pk, rk string, err error) {
	body, ok := strings.CutPrefix(tok, entityTokenPrefix)
	if ok {
		var raw []byte
		if raw, err = base64.RawURLEncoding.DecodeString(body); err == nil {
			if pk, rk, ok = strings.Cut(string(raw), "\x00"); ok && store.ValidateKeys(pk, rk) == nil {
				return pk, rk, nil
			}
		}
	}
	return "", "", store.Errorf(store.CodeInvalidInput, 400, "continuation token %q is not one this store issued", truncate(tok))
}

func encodeTableToken(name string) string {
	return tableTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(name))
}

func decodeTableToken(tok string) (string, error) {
	if body, ok := strings.CutPrefix(tok, tableTokenPrefix); ok {
		if raw, err := base64.RawURLEncoding.DecodeString(body); err == nil {
			return string(raw), nil
		}
	}
	return "", store.Errorf(store.CodeInvalidInput, 400, "table continuation token %q is not one this store issued", truncate(tok))
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
