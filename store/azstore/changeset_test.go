package azstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// referenceParse is the obvious parser built on the standard library's
// multipart and HTTP readers: the definition parseChangeset must agree with.
func referenceParse(contentType string, body []byte) ([]changesetPart, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	var out []changesetPart
	var read func(r *multipart.Reader, depth int) error
	read = func(r *multipart.Reader, depth int) error {
		for {
			part, err := r.NextPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			data, _ := io.ReadAll(part)
			mt, ps, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
			if strings.HasPrefix(mt, "multipart/") && depth == 0 {
				if err := read(multipart.NewReader(bytes.NewReader(data), ps["boundary"]), depth+1); err != nil {
					return err
				}
				continue
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
			if err != nil {
				return err
			}
			rb, _ := io.ReadAll(resp.Body)
			cid, _ := strconv.Atoi(resp.Header.Get("Content-ID"))
			out = append(out, changesetPart{status: resp.StatusCode, etag: resp.Header.Get("ETag"), contentID: cid, body: bytes.TrimRight(rb, "\r\n")})
		}
	}
	err = read(multipart.NewReader(bytes.NewReader(body), params["boundary"]), 0)
	return out, err
}

// batchResponse writes a changeset response the way the service does.
func batchResponse(rng *rand.Rand, n int, failAt int, nl string) (string, []byte) {
	var b bytes.Buffer
	outer, inner := fmt.Sprintf("batchresponse_%d", rng.Int()), fmt.Sprintf("changesetresponse_%d", rng.Int())
	fmt.Fprintf(&b, "--%s%sContent-Type: multipart/mixed; boundary=%s%s%s", outer, nl, inner, nl, nl)
	for i := range n {
		fmt.Fprintf(&b, "--%s%sContent-Type: application/http%sContent-Transfer-Encoding: binary%s%s", inner, nl, nl, nl, nl)
		if i == failAt {
			fmt.Fprintf(&b, "HTTP/1.1 409 Conflict%sContent-ID: %d%sContent-Type: application/json;odata=minimalmetadata%s%s", nl, i+1, nl, nl, nl)
			fmt.Fprintf(&b, `{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"%d:The specified entity already exists.\nRequestId:x"}}}%s`, i, nl)
			break
		}
		fmt.Fprintf(&b, "HTTP/1.1 204 No Content%sContent-ID: %d%sETag: W/\"datetime'2026-11-22T11%%3A%02d%%3A00.%07dZ'\"%s%s%s", nl, i+1, nl, i%60, rng.IntN(1e7), nl, nl, nl)
	}
	fmt.Fprintf(&b, "--%s--%s--%s--%s", inner, nl, outer, nl)
	return "multipart/mixed; boundary=" + outer, b.Bytes()
}

func TestParseChangesetAgreesWithTheStandardLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for i := range 300 {
		n := 1 + rng.IntN(100)
		failAt := -1
		if rng.IntN(3) == 0 {
			failAt = rng.IntN(n)
		}
		nl := "\r\n"
		if i%5 == 4 {
			nl = "\n"
		}
		ct, body := batchResponse(rng, n, failAt, nl)
		want, werr := referenceParse(ct, body)
		got, gerr := parseChangeset(ct, body)
		if werr != nil || gerr != nil {
			t.Fatalf("case %d: reference error %v, parser error %v", i, werr, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (%d parts, fail at %d):\n got %+v\nwant %+v", i, n, failAt, got, want)
		}
	}
}

func TestParseChangesetRefusesMalformedBodies(t *testing.T) {
	for name, c := range map[string][2]string{
		"not multipart": {"application/json", "{}"},
		"no boundary":   {"multipart/mixed; boundary=b", "nothing here"},
		"unterminated":  {"multipart/mixed; boundary=b", "--b\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 204 No Content\r\n"},
		"not HTTP":      {"multipart/mixed; boundary=b", "--b\r\nContent-Type: application/http\r\n\r\nhello\r\n--b--\r\n"},
		"bad status":    {"multipart/mixed; boundary=b", "--b\r\n\r\nHTTP/1.1 abc Bad\r\n\r\n\r\n--b--\r\n"},
	} {
		if _, err := parseChangeset(c[0], []byte(c[1])); err == nil {
			t.Errorf("%s: parsed without error", name)
		} else if errors.Is(err, nil) {
			t.Errorf("%s: nil error", name)
		}
	}
}

func BenchmarkParseChangeset(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	ct, body := batchResponse(rng, 100, -1, "\r\n")
	b.Run("tablekit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := parseChangeset(ct, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := referenceParse(ct, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
