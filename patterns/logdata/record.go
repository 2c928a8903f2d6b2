package logdata

import (
	"bytes"
	"fmt"
	"time"
)

// The record format: one line per record, its time first.
//
//	2026-11-24T15:04:05.123456789Z<TAB>payload<LF>
//
// The time is UTC with nine fractional digits, always 30 bytes, so lines
// sort by time and any tool can cut them. In the payload a backslash is
// written \\, a line feed \n and a carriage return \r; every other byte
// (tabs, invalid UTF-8) is written as it is. A block holds whole lines
// only, and an append is atomic, so a blob always ends at a line's end.

// timeLayout writes the fixed-width time of a record.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// timeWidth is the length of a formatted time.
const timeWidth = len(timeLayout)

// Record is one log record.
type Record struct {
	// Time is when the writer took the record, in UTC at nanosecond
	// precision; a writer's records never go back in time.
	Time time.Time
	// Data is the record's payload, as written.
	Data []byte
	// Blob is the name of the blob the record was read from.
	Blob string
}

// encodedLen is the length of a record's line.
func encodedLen(data []byte) int {
	n := timeWidth + 2 + len(data)
	for _, c := range data {
		if c == '\\' || c == '\n' || c == '\r' {
			n++
		}
	}
	return n
}

// appendRecord appends the line of a record to b.
func appendRecord(b []byte, t time.Time, data []byte) []byte {
	b = t.UTC().AppendFormat(b, timeLayout)
	b = append(b, '\t')
	for _, c := range data {
		switch c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return append(b, '\n')
}

// parseRecord reads one line (without its line feed).
func parseRecord(line []byte) (time.Time, []byte, error) {
	if len(line) < timeWidth+1 || line[timeWidth] != '\t' {
		return time.Time{}, nil, fmt.Errorf("the line does not start with a %d-byte time and a tab", timeWidth)
	}
	t, err := time.Parse(timeLayout, string(line[:timeWidth]))
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("the line's time %q is not valid: %v", line[:timeWidth], err)
	}
	payload := line[timeWidth+1:]
	if bytes.IndexByte(payload, '\\') < 0 {
		return t, bytes.Clone(payload), nil
	}
	out := make([]byte, 0, len(payload))
	for i := 0; i < len(payload); i++ {
		c := payload[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 == len(payload) {
			return time.Time{}, nil, fmt.Errorf("the payload ends with a lone backslash")
		}
		i++
		switch payload[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		default:
			return time.Time{}, nil, fmt.Errorf("unknown escape \\%c at payload offset %d", payload[i], i-1)
		}
	}
	return t, out, nil
}
