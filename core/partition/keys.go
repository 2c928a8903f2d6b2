package partition

import (
	"fmt"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// The reserved RowKeys. The fence takes the smallest key there is, the
// empty string, so it is the first row of every scan. The tail takes
// U+FFFD, which sorts after every key that does not start with U+FFFD,
// U+FFFE or U+FFFF in the service's UTF-16 order (after supplementary
// characters too). Outbox rows follow the tail, so a read of the data and
// its two boundaries ("RowKey le '\uFFFD'") never reads them.
const (
	// FenceKey is the RowKey of the fence row.
	FenceKey = ""
	// TailKey is the RowKey of the tail row.
	TailKey = "\uFFFD"
	// OutboxPrefix starts the RowKey of every outbox row; the rest is the
	// row's id.
	OutboxPrefix = "\uFFFDoutbox_"
)

// dataRangeText describes DataRange in messages, in ASCII.
const dataRangeText = `ge " " and lt "\ufffd"`

// dataLower is the smallest non-empty key: characters below U+0020 are
// forbidden in keys.
const dataLower = " "

// DataRange returns the RowKeys of data rows: every key from " " (the
// smallest non-empty key) up to, not including, TailKey. It excludes the
// fence, the tail, the outbox rows and anything else the package may
// reserve under U+FFFD.
func DataRange() keys.Range {
	return keys.Range{Lower: dataLower, Upper: TailKey, HasUpper: true}
}

// IsReserved reports whether rk is a RowKey the package reserves: the
// fence's "" or any key at or after TailKey.
func IsReserved(rk string) bool { return !DataRange().Contains(rk) }

// DataCond returns the condition selecting the data rows of partition pk:
// PartitionKey eq pk and RowKey in DataRange. AND it with your own
// conditions in any query over a fenced partition that is not already
// bounded to a range of your own keys, so that it never reads the
// reserved rows as data.
func DataCond(pk string) filter.Cond {
	return filter.PK.Eq(pk).And(filter.RK.Ge(dataLower), filter.RK.Lt(TailKey))
}

// outboxRange is the RowKey range of the outbox rows.
func outboxRange() keys.Range { return keys.PrefixRange(OutboxPrefix) }

// checkDataKey refuses a data write to a reserved RowKey.
func checkDataKey(rk string) error {
	if !IsReserved(rk) {
		return nil
	}
	what := "the tail and outbox rows (every key from U+FFFD up)"
	if rk == FenceKey {
		what = "the fence row"
	}
	return refuse(store.CodeInvalidInput, 400,
		"RowKey %s is reserved for %s: data RowKeys must lie in %s", quote(rk), what, dataRangeText)
}

// refuse builds the *store.Error of a check made before anything is sent.
func refuse(code string, status int, format string, args ...any) *store.Error {
	e := store.Errorf(code, status, format, args...)
	e.Source = store.SourceClient
	return e
}

// quote quotes a key for a message in ASCII (U+FFFD shows as \ufffd),
// cutting very long ones.
func quote(s string) string {
	const max = 64
	if len(s) <= max {
		return fmt.Sprintf("%+q", s)
	}
	r := []rune(s)
	if len(r) > max {
		r = r[:max]
	}
	return fmt.Sprintf("%+q... (%d bytes)", string(r), len(s))
}
