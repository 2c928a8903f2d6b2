package large

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tablekit/tablekit/store"
)

// A blob's name says whose value it holds:
//
//	<table>/_<PartitionKey>/_<RowKey>/<Property>/<id>
//
// with the table name in lower case (table names are case-insensitive),
// each key escaped by escapeKey and prefixed with "_" (so an empty key
// makes a non-empty segment), and id a fresh time-ordered random id
// (keys.IDGenerator). The sweeper lists a table's blobs by the prefix
// "<table>/", finds the entity of each from its name, and reads that
// entity once for all of its blobs, which sort together.

// nameParts is a parsed blob name.
type nameParts struct {
	pk, rk, prop, id string
}

// tablePrefix is the name prefix of a table's blobs.
func tablePrefix(table string) string { return strings.ToLower(table) + "/" }

// entityPrefix is the name prefix of one entity's blobs.
func entityPrefix(table, pk, rk string) string {
	return tablePrefix(table) + "_" + escapeKey(pk) + "/_" + escapeKey(rk) + "/"
}

// blobName is the name of a blob holding property prop of an entity.
func blobName(table, pk, rk, prop, id string) string {
	return entityPrefix(table, pk, rk) + prop + "/" + id
}

// checkName refuses keys too long to name their entity's blobs.
func checkName(table, pk, rk, prop, id string) error {
	name := blobName(table, pk, rk, prop, id)
	if n := store.UTF16Len(name); n > store.MaxBlobNameUnits {
		return refuseCode(store.CodeKeyValueTooLarge, 400,
			"%s: the keys are too long to name the blob of property %s: the name would be %d characters, the limit is %d (the escaped keys may take about %d together)",
			entityName(table, pk, rk), prop, n, store.MaxBlobNameUnits,
			store.MaxBlobNameUnits-(n-store.UTF16Len(escapeKey(pk))-store.UTF16Len(escapeKey(rk))))
	}
	return nil
}

// parseName splits a blob name of table's prefix into its parts; ok is
// false for a name not in the package's layout.
func parseName(table, name string) (p nameParts, ok bool) {
	rest, found := strings.CutPrefix(name, tablePrefix(table))
	if !found {
		return p, false
	}
	segs := strings.Split(rest, "/")
	if len(segs) != 4 || !strings.HasPrefix(segs[0], "_") || !strings.HasPrefix(segs[1], "_") || segs[2] == "" || segs[3] == "" {
		return p, false
	}
	var err1, err2 error
	p.pk, err1 = unescapeKey(segs[0][1:])
	p.rk, err2 = unescapeKey(segs[1][1:])
	if err1 != nil || err2 != nil {
		return p, false
	}
	if store.ValidatePropertyName(segs[2]) != nil {
		return p, false
	}
	p.prop, p.id = segs[2], segs[3]
	return p, true
}

// blobProp returns the property segment of a blob name in the layout.
func blobProp(name string) string {
	segs := strings.Split(name, "/")
	if len(segs) < 2 {
		return ""
	}
	return segs[len(segs)-2]
}

// escapeKey writes a key as a blob name segment: letters, digits, '-'
// and '_' and every character from U+00A0 up stay as they are; any other
// character (ASCII punctuation, space, '.', '~' itself) becomes '~' and
// two hex digits, so that no segment is "." or "..", holds a '/' or ends
// with a dot. Keys hold no control characters (the service refuses them).
func escapeKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r >= 0xA0:
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "~%02X", r)
		}
	}
	return b.String()
}

// unescapeKey reverses escapeKey.
func unescapeKey(s string) (string, error) {
	if !strings.Contains(s, "~") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape in %q", s)
		}
		c, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil || c >= 0x80 {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b.WriteByte(byte(c))
		i += 2
	}
	return b.String(), nil
}
