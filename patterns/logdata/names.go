package logdata

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store"
)

// Period is how much time one folder of blobs covers: a writer starts a
// new blob when its records move into the next period, and a reader lists
// one folder per period of the range it reads.
type Period int

const (
	// Hourly names blobs <prefix>/2026/11/24/15/<writer>-<seq>.log: the
	// records of the hour from 15:00 UTC.
	Hourly Period = iota
	// Daily names blobs <prefix>/2026/11/24/<writer>-<seq>.log: the
	// records of the UTC day.
	Daily
)

// String names the period.
func (p Period) String() string {
	switch p {
	case Hourly:
		return "Hourly"
	case Daily:
		return "Daily"
	}
	return "Period(" + strconv.Itoa(int(p)) + ")"
}

func (p Period) valid() bool { return p == Hourly || p == Daily }

// start is the beginning of the period holding t, in UTC.
func (p Period) start(t time.Time) time.Time {
	t = t.UTC()
	if p == Daily {
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
	return t.Truncate(time.Hour)
}

// next is the start of the period after the one starting at s.
func (p Period) next(s time.Time) time.Time {
	if p == Daily {
		return s.AddDate(0, 0, 1)
	}
	return s.Add(time.Hour)
}

// folder is the name prefix of the blobs of the period starting at s,
// ending with a slash.
func (p Period) folder(prefix string, s time.Time) string {
	if p == Daily {
		return fmt.Sprintf("%s/%04d/%02d/%02d/", prefix, s.Year(), int(s.Month()), s.Day())
	}
	return fmt.Sprintf("%s/%04d/%02d/%02d/%02d/", prefix, s.Year(), int(s.Month()), s.Day(), s.Hour())
}

// seqWidth is the width of a blob's sequence number: blobs of one writer
// sort in the order it wrote them.
const seqWidth = 8

// maxSeq is the last sequence number of that width.
const maxSeq = 99_999_999

// blobName is the name of a writer's seq-th blob in the period starting at s.
func blobName(p Period, prefix, id string, s time.Time, seq int) string {
	return fmt.Sprintf("%s%s-%0*d.log", p.folder(prefix, s), id, seqWidth, seq)
}

// parseLeaf splits the last segment of a log blob's name into the writer
// id and sequence number; ok is false for a name that does not follow the
// scheme (not a log blob of this package).
func parseLeaf(leaf string) (id string, seq int, ok bool) {
	base, found := strings.CutSuffix(leaf, ".log")
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(base, '-')
	if i <= 0 || len(base)-i-1 != seqWidth {
		return "", 0, false
	}
	n, err := strconv.Atoi(base[i+1:])
	if err != nil || n < 0 || validateID(base[:i]) != nil {
		return "", 0, false
	}
	return base[:i], n, true
}

// maxIDLen bounds a writer id.
const maxIDLen = 64

// validateID checks a writer id: 1 to 64 ASCII letters, digits, '-', '_'
// or '.', so that it is one path segment and cannot be mistaken for
// another writer's id followed by a sequence number.
func validateID(id string) error {
	if id == "" || len(id) > maxIDLen {
		return invalid("writer id %q is %d characters long: it must be 1 to %d", id, len(id), maxIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return invalid("writer id %q: character %q at offset %d is not allowed (ASCII letters, digits, '-', '_', '.')", id, c, i)
		}
	}
	return nil
}

// validatePrefix checks a name prefix: not empty, no leading or trailing
// slash, no empty segment, and valid in a blob name with the longest
// names the package makes under it.
func validatePrefix(prefix string) error {
	switch {
	case prefix == "":
		return invalid("prefix is empty: log blobs need a name prefix such as \"logs/web\"")
	case strings.HasPrefix(prefix, "/") || strings.HasSuffix(prefix, "/"):
		return invalid("prefix %q starts or ends with a slash: give it without (the package adds the separators)", prefix)
	case strings.Contains(prefix, "//"):
		return invalid("prefix %q has an empty path segment (//)", prefix)
	}
	longest := blobName(Hourly, prefix, strings.Repeat("w", maxIDLen), time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), maxSeq)
	err := store.ValidateBlobName(longest)
	switch {
	case err == nil:
		return nil
	case store.Code(err) == store.CodeOutOfRangeInput:
		added := len(longest) - len(prefix)
		return invalid("prefix %s is %d characters long: with the %d the package adds (date folders, a writer id of up to %d, a sequence number) blob names could pass the service's limit of %d characters (or %d path segments)",
			clip(prefix), store.UTF16Len(prefix), added, maxIDLen, store.MaxBlobNameUnits, store.MaxBlobPathSegments)
	}
	return invalid("prefix %s does not make valid blob names: %v", clip(prefix), err)
}

// clip quotes a value for a message, cutting a long one.
func clip(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q...(%d bytes)", s[:64], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// invalid is the error of bad input: nothing was sent.
func invalid(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "logdata: "+format, args...)
	e.Source = store.SourceClient
	return e
}
