package azstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// FuzzParseChangeset proves a malformed batch response never panics the
// parser, and that a failed part always yields an index within range.
func FuzzParseChangeset(f *testing.F) {
	f.Add("multipart/mixed; boundary=b", "--b\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\nETag: W/\"1\"\r\n\r\n\r\n--b--\r\n")
	f.Add("multipart/mixed; boundary=b", "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 409 Conflict\r\nContent-ID: 1\r\n\r\n{\"odata.error\":{\"code\":\"EntityAlreadyExists\",\"message\":{\"value\":\"3:exists\"}}}\r\n--c--\r\n--b--\r\n")
	f.Add("text/plain", "")
	f.Fuzz(func(t *testing.T, contentType, body string) {
		parts, err := parseChangeset(contentType, []byte(body))
		if err != nil {
			return
		}
		for _, p := range parts {
			if p.status >= 400 {
				fe := p.failure("fuzz", 4)
				if idx := indexOf(fe); idx < -1 || idx >= 4 {
					t.Fatalf("index %d out of range", idx)
				}
			}
		}
	})
}

// FuzzConnStringNeverLeaksKey proves no connection string error shows the
// account key, wherever in the string it sits.
func FuzzConnStringNeverLeaksKey(f *testing.F) {
	f.Add("AccountName=a;AccountKey=", ";x")
	f.Add("", "=")
	f.Add("TableEndpoint=", ";Bogus")
	f.Fuzz(func(t *testing.T, before, after string) {
		const key = "S3cr3tK3yV4lu3"
		_, err := parseConnString(before + key + after)
		if err != nil && strings.Contains(err.Error(), key) {
			t.Fatalf("error leaks the key: %v", err)
		}
	})
}

func indexOf(err error) int {
	var se *store.Error
	if errors.As(err, &se) {
		return se.Index
	}
	return -2
}
