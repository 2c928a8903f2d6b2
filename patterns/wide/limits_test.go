package wide

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// userPropsInHeader is how many of a value's properties the header holds
// (its own three take the rest of 252).
const userPropsInHeader = store.MaxCustomProperties - 4

// rowsFor is the rows a value of n small properties takes.
func rowsFor(n int) int {
	if n <= userPropsInHeader {
		return 1
	}
	return 1 + (n-userPropsInHeader+store.MaxCustomProperties-2)/(store.MaxCustomProperties-1)
}

// Values at and around every limit of one entity round-trip whole, and
// take the rows the layout says; a value that does not fit one
// transaction is refused before anything is written.
func TestRoundTripsAroundTheLimits(t *testing.T) {
	ascii := func(n int) string { return strings.Repeat("x", n) }
	withBody := func(body any, extra Properties) Properties {
		m := Properties{"Title": "t"}
		for k, v := range extra {
			m[k] = v
		}
		m["Body"] = body
		return m
	}
	bin := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i * 7)
		}
		return b
	}
	emoji := strings.Repeat("\U0001F600", store.MaxStringUnits/2+1) // 32,768 units: one pair over the limit
	type tc struct {
		name   string
		v      Properties
		rows   int  // 0: do not check
		pieces int  // pieces of Body, 0 for whole
		large  bool // refused as too large
		slow   bool // memstore only (a large request Azurite takes seconds over)
	}
	cases := []tc{
		{name: "no properties", v: Properties{}, rows: 1},
		{name: "248 properties: the header alone", v: counters(248, 0), rows: 1},
		{name: "249 properties", v: counters(249, 0), rows: 2},
		{name: "250 properties", v: counters(250, 0), rows: rowsFor(250)},
		{name: "251 properties", v: counters(251, 0), rows: rowsFor(251)},
		{name: "252 properties", v: counters(252, 0), rows: rowsFor(252)},
		{name: "253 properties", v: counters(253, 0), rows: rowsFor(253)},
		{name: "500 properties", v: counters(500, 0), rows: rowsFor(500)},
		{name: "501 properties", v: counters(501, 0), rows: rowsFor(501)},
		{name: "string of 32,767 units: whole", v: withBody(ascii(store.MaxStringUnits), nil), rows: 1},
		{name: "string of 64 KiB (32,768 units): two pieces", v: withBody(ascii(store.MaxStringUnits+1), nil), rows: 1, pieces: 2},
		{name: "32,768 units of surrogate pairs: cut between characters", v: withBody(emoji, nil), rows: 1, pieces: 2},
		{name: "non-ASCII string of 100,000 units", v: withBody(strings.Repeat("é<&>\"\\", 100_000/6), nil), rows: 1, pieces: 4},
		{name: "binary of 64 KiB: whole", v: withBody(bin(store.MaxBinaryBytes), nil), rows: 1},
		{name: "binary of 64 KiB + 1: two pieces", v: withBody(bin(store.MaxBinaryBytes+1), nil), rows: 1, pieces: 2},
		{name: "1 MiB binary: two rows", v: withBody(bin(1<<20), nil), rows: 2, pieces: 16},
		{name: "1 MiB string and 300 properties", v: withBody(ascii(1<<20), counters(300, 0)), rows: 0, pieces: 33, slow: true},
		{name: "2.8 MiB binary (3.9 MB as base64): the largest that fits a transaction", v: withBody(bin(2_900_000), nil), rows: 4, pieces: 45},
		{name: "3.2 MiB binary: too large for a transaction", v: withBody(bin(3_200_000), nil), large: true},
		{name: "1.5 MB of UTF-8 whose escapes pass 4 MiB", v: withBody(strings.Repeat("é", 700_000), nil), large: true},
		{name: "24,000 properties in 97 rows", v: counters(24_000, 0), rows: rowsFor(24_000), slow: true},
		{name: "26,000 properties: more than 100 rows", v: counters(26_000, 0), large: true},
	}
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		st := b.Store
		name := freshTable(t, b)
		w := newWide[Properties](t, st, name, nil)
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if c.slow && b.Short() {
					t.Skip("memstore only: Azurite takes seconds over this request, and the 1 MiB and 2.8 MiB cases cover its limits")
				}
				pk, id := fmt.Sprintf("p%02d", i), fmt.Sprintf("v%02d", i)
				etag, err := w.Put(t.Context(), pk, id, &c.v, "")
				if c.large {
					var tl *TooLargeError
					if !errors.As(err, &tl) || !errors.Is(err, ErrTooLarge) || !errors.Is(err, store.ErrTooLarge) || store.SourceOf(err) != store.SourceClient {
						t.Fatalf("Put: %v, want a TooLargeError from the client", err)
					}
					if n := len(rows(t, w.Table(), pk)); n != 0 {
						t.Fatalf("%d rows written", n)
					}
					if _, _, err := w.Get(t.Context(), pk, id); !errors.Is(err, store.ErrNotFound) {
						t.Fatalf("Get after a refused Put: %v, want not found", err)
					}
					t.Logf("%s: refused: rows %d, actions %d, body about %d bytes, %d properties of %d bytes: %v", b.Name, tl.Rows, tl.Actions, tl.Bytes, tl.Properties, tl.Size, err)
					return
				}
				if err != nil {
					t.Fatalf("Put: %v", err)
				}
				s, err := w.Read(t.Context(), pk, id)
				if err != nil {
					t.Fatal(err)
				}
				if s.ETag != etag || s.Version != 1 || s.Attempts != 1 || s.Requests != 1 {
					t.Fatalf("ETag %s (Put gave %s), version %d, %d attempts, %d requests", s.ETag, etag, s.Version, s.Attempts, s.Requests)
				}
				if c.rows != 0 && s.Rows != c.rows {
					t.Fatalf("%d rows, want %d", s.Rows, c.rows)
				}
				if err := sameProps(s.Value, c.v); err != nil {
					t.Fatal(err)
				}
				stored := 0
				pieces := 0
				for _, e := range rows(t, w.Table(), pk) {
					if i, ok := rowIndex(id, e.RowKey); ok && i < s.Rows {
						stored++
						for k := range e.Properties {
							if n, _, ok := parsePiece(k); ok && n == "Body" {
								pieces++
							}
						}
					}
				}
				if stored != s.Rows || pieces != c.pieces {
					t.Fatalf("%d rows stored of %d, Body in %d pieces, want %d", stored, s.Rows, pieces, c.pieces)
				}
			})
		}
	})
}

// A value's rows are never refused by the service: every row the layout
// makes passes store.ValidateEntity and keeps its JSON body within 1 MiB,
// and every transaction it accepts passes store.ValidateTransaction, which
// measures the body exactly as the layout does. Random values (seeded) mix every type, non-ASCII text and
// the characters JSON escapes.
func TestLayoutIsNeverRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	r := rng.Uint64
	alphabet := []string{"a", "é", "<", "&", "\"", "\\", "\U0001F600", "\n", "語"}
	w := newWide[Properties](t, memstore.New(), "Docs", nil)
	long := func(max uint64) int {
		if r()%16 == 0 {
			return int(r() % max)
		}
		return int(r() % 64)
	}
	refused, values := 0, 30
	for n := range values {
		props := Properties{}
		for i := range int(r() % 700) {
			name := fmt.Sprintf("P%d_%d", i, r()%1000)
			switch r() % 7 {
			case 0:
				// Runs of one character keep the generator cheap.
				var sb strings.Builder
				for n := long(160_000); n > 0; {
					k := min(n, 1+int(r()%5000))
					sb.WriteString(strings.Repeat(alphabet[r()%uint64(len(alphabet))], k))
					n -= k
				}
				props[name] = sb.String()
			case 1:
				props[name] = bytes.Repeat([]byte{byte(r())}, long(300_000))
			case 2:
				props[name] = int64(r())
			case 3:
				props[name] = float64(r()%1000) / 7
			case 4:
				props[name] = r()%2 == 0
			case 5:
				props[name] = store.GUID{byte(r())}
			default:
				props[name] = int32(r())
			}
		}
		actions, err := planOf(w, "p", fmt.Sprintf("id %d", n), props, &header{exists: true, etag: `W/"x"`, version: 4, rows: int(r() % 100)})
		var tl *TooLargeError
		switch {
		case errors.As(err, &tl):
			if tl.Bytes < store.MaxBatchBytes && tl.Actions <= MaxRows {
				t.Fatalf("value %d refused at %d bytes and %d actions", n, tl.Bytes, tl.Actions)
			}
			refused++
			continue
		case err != nil:
			t.Fatal(err)
		}
		if err := store.ValidateTransaction(actions); err != nil {
			t.Fatalf("value %d: the store refuses the layout: %v", n, err)
		}
		for i := range actions {
			if actions[i].Kind != store.ActionDelete {
				if err := store.ValidateEntity(&actions[i].Entity); err != nil {
					t.Fatalf("value %d: row %d: %v", n, i, err)
				}
				if body := store.EstimateWireSize(&actions[i].Entity); body > store.MaxEntitySize {
					t.Fatalf("value %d: row %d has a body of about %d bytes, over the 1 MiB Azurite allows a replace", n, i, body)
				}
			}
		}
	}
	t.Logf("%d random values: %d laid out within the limits, %d refused as too large", values, values-refused, refused)
	if refused == 0 || refused == values {
		t.Fatal("the values do not reach both sides of the limit")
	}
}

// planOf lays props out on top of h as Put would.
func planOf(w *Wide[Properties], pk, id string, props Properties, h *header) ([]store.Action, error) {
	t, err := w.locate(pk, id)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	if err := w.precheck(&t, names, props); err != nil {
		return nil, err
	}
	cs, err := cells(names, props)
	if err != nil {
		return nil, err
	}
	return w.plan(&t, h, cs, len(names), h.version+1)
}
