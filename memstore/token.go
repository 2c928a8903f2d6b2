package memstore

import (
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
)

// Continuation tokens are sealed by driver.SealToken: bound to the query
// they continue (the table and filter, or the listing's prefix) and
// checked for damage. Inside, an entity token holds the key of the next
// entity to examine and a table token the next table name.

const (
	entityTokenPrefix = "tkm1."
	tableTokenPrefix  = "tkmt1."
)

func encodeEntityToken(scope uint64, pk, rk string) string {
	return driver.SealToken(entityTokenPrefix, scope, pk, rk)
}

func decodeEntityToken(tok string, scope uint64) (pk, rk string, err error) {
	parts, err := driver.OpenToken(tok, entityTokenPrefix, scope, 2)
	if err != nil {
		return "", "", err
	}
	if err := store.ValidateKeys(parts[0], parts[1]); err != nil {
		return "", "", store.Errorf(store.CodeInvalidInput, 400, "continuation token %q is not one this store issued", truncate(tok))
	}
	return parts[0], parts[1], nil
}

// tableScope binds a table token to the listing's name prefix.
func tableScope(prefix string) uint64 { return driver.TokenScope("", prefix) }

func encodeTableToken(prefix, name string) string {
	return driver.SealToken(tableTokenPrefix, tableScope(prefix), name)
}

func decodeTableToken(tok, prefix string) (string, error) {
	parts, err := driver.OpenToken(tok, tableTokenPrefix, tableScope(prefix), 1)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
