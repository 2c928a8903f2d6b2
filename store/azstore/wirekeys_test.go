package azstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// serviceKeys reads the keys of an entity path the way the service does:
// the path is percent-decoded once, then the OData key predicate
// (PartitionKey='...',RowKey='...') is parsed with ” standing for '.
func serviceKeys(t *testing.T, decodedPath string) (pk, rk string) {
	t.Helper()
	rest := decodedPath
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		rest = rest[i+1:]
	}
	_, rest, ok := strings.Cut(rest, "(PartitionKey='")
	if !ok {
		t.Fatalf("path %q has no key predicate", decodedPath)
	}
	literal := func() string {
		var b strings.Builder
		for i := 0; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				rest = rest[i+1:]
				return b.String()
			}
			b.WriteByte(rest[i])
		}
		t.Fatalf("path %q: unterminated key literal", decodedPath)
		return ""
	}
	pk = literal()
	if !strings.HasPrefix(rest, ",RowKey='") {
		t.Fatalf("path %q: no RowKey after PartitionKey", decodedPath)
	}
	rest = rest[len(",RowKey='"):]
	rk = literal()
	if rest != ")" {
		t.Fatalf("path %q: %q after the key predicate", decodedPath, rest)
	}
	return pk, rk
}

// bodyKeys returns the PartitionKey and RowKey members of a JSON body.
func bodyKeys(t *testing.T, body string) (pk, rk string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	pk, _ = m["PartitionKey"].(string)
	rk, _ = m["RowKey"].(string)
	return pk, rk
}

// TestKeysReachTheServiceIntact proves that for awkward keys (empty,
// quotes, percent signs, plus, spaces, unicode, OData-looking text) every
// kind of single operation and transaction action puts the same keys in
// its URL, as the service decodes it, and in its JSON body.
func TestKeysReachTheServiceIntact(t *testing.T) {
	rec := newRecorder(t)
	tbl := rec.store(t).Table("tbl")
	ctx := t.Context()
	keys := [][2]string{
		{"", "r"}, {"o'p", "it''s"}, {"", "'"}, {"a%20b%01", "%27"}, {"1+1 = 2", "x&y;z,w"},
		{"é😀中", "\u2028 "}, {"PartitionKey='x'", "RowKey=''"}, {"''", "'',''"},
	}
	check := func(what, wantPK, wantRK, path, body string) {
		t.Helper()
		if path != "" {
			if pk, rk := serviceKeys(t, path); pk != wantPK || rk != wantRK {
				t.Errorf("%s: URL %q carries keys (%q, %q), want (%q, %q)", what, path, pk, rk, wantPK, wantRK)
			}
		}
		if body != "" {
			if pk, rk := bodyKeys(t, body); pk != wantPK || rk != wantRK {
				t.Errorf("%s: body %s carries keys (%q, %q), want (%q, %q)", what, body, pk, rk, wantPK, wantRK)
			}
		}
	}
	for _, k := range keys {
		pk, rk := k[0], k[1]
		e := store.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"V": "v'%"}}
		// A key holding '%' never travels in an entity path (see
		// percentkeys.go): its point operations go out as a query or a
		// one-action $batch, whose sub-request carries the keys instead.
		single := func(what string) {
			t.Helper()
			r := rec.last(t)
			if pathSafe("tbl", pk, rk) {
				check(what, pk, rk, r.path, r.body)
				return
			}
			subs := subRequestParts(t, r.body)
			if len(subs) != 1 {
				t.Fatalf("%s with a '%%' key: %d sub-requests, want a one-action $batch", what, len(subs))
			}
			check(what, pk, rk, subs[0].path, subs[0].body)
		}
		_, _ = tbl.Get(ctx, pk, rk, nil)
		if pathSafe("tbl", pk, rk) {
			check("Get", pk, rk, rec.last(t).path, "")
		} else if p := rec.last(t).path; !strings.HasSuffix(p, "/tbl()") {
			t.Errorf("Get with a '%%' key went to %q, want a query of /tbl()", p)
		}
		if err := tbl.Delete(ctx, pk, rk, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		single("Delete")
		if _, err := tbl.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		check("Insert", pk, rk, "", rec.last(t).body)
		for _, mode := range []store.UpdateMode{store.Merge, store.Replace} {
			if _, err := tbl.Update(ctx, e, mode, store.ETagAny); err != nil {
				t.Fatal(err)
			}
			single(fmt.Sprintf("Update %v", mode))
			if _, err := tbl.Upsert(ctx, e, mode); err != nil {
				t.Fatal(err)
			}
			single(fmt.Sprintf("Upsert %v", mode))
		}
		for kind := store.ActionInsert; kind <= store.ActionDelete; kind++ {
			a := store.Action{Kind: kind, Entity: e}
			if kind.NeedsIfMatch() {
				a.IfMatch = store.ETagAny
			}
			// The recorder answers two parts; only the request matters here.
			_, _ = tbl.Transact(ctx, []store.Action{a, {Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: pk, RowKey: "other"}}})
			r := rec.last(t)
			subs := subRequestParts(t, r.body)
			if len(subs) != 2 {
				t.Fatalf("%v: %d sub-requests", kind, len(subs))
			}
			path, body := subs[0].path, subs[0].body
			if subs[0].method == http.MethodPost {
				path = ""
			}
			check("transaction "+kind.String(), pk, rk, path, body)
		}
	}
}

type subRequest struct{ method, path, body, ifMatch string }

// subRequestParts reads a $batch body as the service does: each
// sub-request's body by its own Content-Length, its URL percent-decoded.
func subRequestParts(t *testing.T, batch string) []subRequest {
	t.Helper()
	first, _, _ := strings.Cut(batch, "\r\n")
	ct := "multipart/mixed; boundary=" + strings.TrimPrefix(first, "--")
	subRequests(t, ct, batch) // checks every Content-Length
	var out []subRequest
	_, params, _ := mime.ParseMediaType(ct)
	var walk func(r *multipart.Reader)
	walk = func(r *multipart.Reader) {
		for {
			p, err := r.NextPart()
			if err != nil {
				return
			}
			data, _ := io.ReadAll(p)
			if mt, ps, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
				walk(multipart.NewReader(bytes.NewReader(data), ps["boundary"]))
				continue
			}
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(data)))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(req.Body)
			out = append(out, subRequest{req.Method, req.URL.Path, string(b), req.Header.Get("If-Match")})
		}
	}
	walk(multipart.NewReader(strings.NewReader(batch), params["boundary"]))
	return out
}
