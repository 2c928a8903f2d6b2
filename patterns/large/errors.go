package large

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/store"
)

// ErrMissingBlob is matched (errors.Is) by the error of a read whose
// entity references a blob that does not exist. Reads tell it apart from
// a concurrent update that removed the blob (they read again), so it
// means the blob was deleted outside the package. It does not match
// store.ErrNotFound, which a read returns when the entity itself is
// missing.
var ErrMissingBlob = errors.New("large: referenced blob is missing")

// ErrCorruptBlob is matched by the error of a read whose blob does not
// hold what its reference records: another length or checksum, or
// compressed data that does not decompress.
var ErrCorruptBlob = errors.New("large: blob does not match its reference")

// ErrContention is matched by the error of a Put or DeleteKey that lost
// the race for the entity to other writers on every attempt it was
// allowed (Options.Attempts). Nothing of it was applied.
var ErrContention = fmt.Errorf("large: too many concurrent writers: %w", partition.ErrConflict)

// BlobError reports a blob a read could not use. It names the entity,
// the property and the blob, and matches ErrMissingBlob or ErrCorruptBlob.
type BlobError struct {
	// Table, PartitionKey and RowKey name the entity.
	Table, PartitionKey, RowKey string
	// Property is the large property whose value the blob holds.
	Property string
	// Blob is the blob's name in Container.
	Blob, Container string
	// Err is the cause: the service's BlobNotFound, or what did not match.
	Err error

	kind error // ErrMissingBlob or ErrCorruptBlob
}

// Error names the entity, the property, the blob and the cause.
func (e *BlobError) Error() string {
	if e.Blob == "" {
		s := fmt.Sprintf("large: entity (%s, %s) of table %s: property %s holds neither its value nor a blob reference",
			quote(e.PartitionKey), quote(e.RowKey), e.Table, e.Property)
		if e.Err != nil {
			s += ": " + e.Err.Error()
		}
		return s
	}
	what := "is missing"
	if e.kind == ErrCorruptBlob {
		what = "does not match its reference"
	}
	s := fmt.Sprintf("large: entity (%s, %s) of table %s: property %s references blob %s of container %s, which %s",
		quote(e.PartitionKey), quote(e.RowKey), e.Table, e.Property, quote(e.Blob), e.Container, what)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns ErrMissingBlob or ErrCorruptBlob. The cause is in Err;
// it is not unwrapped, so that a missing blob never reads as a missing
// entity (store.ErrNotFound).
func (e *BlobError) Unwrap() error { return e.kind }

// refuse builds a refusal of the package's own checks: InvalidInput,
// nothing sent.
func refuse(format string, args ...any) *store.Error {
	return refuseCode(store.CodeInvalidInput, 400, format, args...)
}

// refuseCode is a refusal with the code the service would give.
func refuseCode(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, "large: "+format, args...)
	e.Source = store.SourceClient
	return e
}

// quote quotes a key for a message, cutting long ones.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	cut := max
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// entityName names an entity in messages.
func entityName(table, pk, rk string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "entity (%s, %s) of table %s", quote(pk), quote(rk), table)
	return b.String()
}
