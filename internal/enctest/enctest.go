// Package enctest is the test kit of client-side encryption through the
// layers above the store (the mapper, the model, core/eventual and the
// patterns that copy properties): a Spy between an encrypting store and
// the backend records every byte the backend is asked to keep (the
// properties of every entity written, every queue message, every blob),
// and Scan reads the tables as stored. Both search for a plaintext that
// must never reach the backend, in the forms it could take there: as it
// is, and base64-encoded at any alignment (an Edm.Binary value or a []byte
// inside a JSON payload).
package enctest

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/intercept"
)

// Key returns a TEST key-encryption key of 32 bytes of seed, under id.
func Key(tb testing.TB, id string, seed byte) *encryption.LocalKey {
	tb.Helper()
	k, err := encryption.NewLocalKey(id, bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// Codec returns a codec encrypting props under a TEST key.
func Codec(tb testing.TB, props ...string) *encryption.Codec {
	tb.Helper()
	c, err := encryption.NewCodec(encryption.Config{Key: Key(tb, "test-kek", 7), Properties: props})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// record is one thing the backend was asked to keep.
type record struct {
	where string // "Table.Insert Staff (pk, rk) Name", "Queue.Put q", ...
	data  []byte
}

// Spy records what passes through it to the backend. It is safe for
// concurrent use.
type Spy struct {
	mu      sync.Mutex
	records []record
	writes  int
}

// Wrap returns st wrapped by a new Spy, and the spy. Hand the result to
// the encrypting store (codec.Store(spied)), so that the spy sees what
// the encryption hands the backend.
func Wrap(st store.Store) (store.Store, *Spy) {
	s := &Spy{}
	return intercept.WrapStore(st, s.hook), s
}

func (s *Spy) hook(ctx context.Context, c intercept.Call, do func(context.Context) error) error {
	if c.Write {
		s.note(c)
	}
	return do(ctx)
}

func (s *Spy) note(c intercept.Call) {
	var recs []record
	entity := func(a store.Action) {
		a, err := a.WithProperties()
		if err != nil {
			recs = append(recs, record{where: c.Op + " " + c.Name + ": unreadable properties: " + err.Error()})
			return
		}
		e := a.Entity
		at := fmt.Sprintf("%s %s (%q, %q)", c.Op, c.Name, e.PartitionKey, e.RowKey)
		recs = append(recs, record{where: at + " keys", data: []byte(e.PartitionKey + "\x00" + e.RowKey)})
		for n, v := range e.Properties {
			var b []byte
			switch v := v.(type) {
			case string:
				b = []byte(v)
			case []byte:
				b = v
			default:
				b = fmt.Append(nil, v)
			}
			recs = append(recs, record{where: at + " " + n, data: b})
		}
	}
	switch {
	case c.Op == "Table.Transact":
		for _, a := range c.Actions {
			entity(a)
		}
	case c.Action.Kind != 0 || c.Action.Source != nil:
		entity(c.Action)
	case len(c.Body) > 0:
		recs = append(recs, record{where: fmt.Sprintf("%s %s %s", c.Op, c.Name, c.Blob), data: append([]byte(nil), c.Body...)})
	}
	s.mu.Lock()
	s.records = append(s.records, recs...)
	s.writes++
	s.mu.Unlock()
}

// Writes is the number of write requests the spy saw.
func (s *Spy) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// Seen reports whether the backend was asked to keep something whose
// description contains part (a property name, "Queue.Put"): a check that
// the spy saw what a test means to search.
func (s *Spy) Seen(part string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.records {
		if bytes.Contains([]byte(r.where), []byte(part)) {
			return true
		}
	}
	return false
}

// Leaks returns where the backend was asked to keep any of the
// plaintexts, in any of the forms Forms lists; none when it never was.
func (s *Spy) Leaks(plaintexts ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.records {
		if p, ok := holds(r.data, plaintexts); ok {
			out = append(out, fmt.Sprintf("%s holds %q", r.where, p))
		}
	}
	return dedup(out)
}

// Scan reads every row of the tables of st (the backend, not the
// encrypting store) and returns where a property holds any of the
// plaintexts.
func Scan(ctx context.Context, st store.Store, tables []string, plaintexts ...string) ([]string, error) {
	var out []string
	for _, name := range tables {
		q := store.Query{}
		for {
			p, err := st.Table(name).Query(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("enctest: scan %s: %w", name, err)
			}
			for _, e := range p.Entities {
				for n, v := range e.Properties {
					var b []byte
					switch v := v.(type) {
					case string:
						b = []byte(v)
					case []byte:
						b = v
					default:
						b = fmt.Append(nil, v)
					}
					if pt, ok := holds(b, plaintexts); ok {
						out = append(out, fmt.Sprintf("%s (%q, %q) %s holds %q", name, e.PartitionKey, e.RowKey, n, pt))
					}
				}
			}
			if p.Continuation == "" {
				break
			}
			q.Continuation = p.Continuation
		}
	}
	return dedup(out), nil
}

// Rows returns the rows of table as stored, keyed by "pk/rk".
func Rows(ctx context.Context, st store.Store, table string) (map[string]store.Entity, error) {
	out := map[string]store.Entity{}
	q := store.Query{}
	for {
		p, err := st.Table(table).Query(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("enctest: read %s: %w", table, err)
		}
		for _, e := range p.Entities {
			out[e.PartitionKey+"/"+e.RowKey] = e
		}
		if p.Continuation == "" {
			return out, nil
		}
		q.Continuation = p.Continuation
	}
}

// Forms returns the byte strings that betray plaintext p in stored data:
// p itself, and the runs of its base64 encodings (standard and URL
// alphabets, padded or not) that appear whatever p's offset in the
// encoded bytes. p should be at least 9 bytes long.
func Forms(p string) [][]byte {
	out := [][]byte{[]byte(p)}
	for k := range 3 {
		s := []byte(p[k:])
		s = s[:len(s)/3*3]
		if len(s) < 6 {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			out = append(out, []byte(enc.EncodeToString(s)))
		}
	}
	return out
}

func holds(b []byte, plaintexts []string) (string, bool) {
	for _, p := range plaintexts {
		for _, f := range Forms(p) {
			if bytes.Contains(b, f) {
				return p, true
			}
		}
	}
	return "", false
}

func dedup(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
