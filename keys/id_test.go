package keys

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for generators.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// bigOfID decodes an id with math/big, independently of the package.
func bigOfID(t *testing.T, id string) *big.Int {
	t.Helper()
	v := new(big.Int)
	for _, c := range id {
		d := strings.IndexRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c)
		if d < 0 {
			t.Fatalf("id %q has %q", id, c)
		}
		v.Lsh(v, 5).Or(v, big.NewInt(int64(d)))
	}
	return v
}

func TestIDLayout(t *testing.T) {
	clock := &fakeClock{t: time.UnixMilli(1_790_000_000_123)}
	random := bytes.Repeat([]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x10, 0x32}, 1)
	g := NewIDGenerator(clock.now, bytes.NewReader(random))
	id, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != IDLen {
		t.Fatalf("id %q has length %d", id, len(id))
	}
	want := new(big.Int).Lsh(big.NewInt(1_790_000_000_123), 80)
	want.Or(want, new(big.Int).SetBytes(random))
	if got := bigOfID(t, id); got.Cmp(want) != 0 {
		t.Errorf("id %q encodes %x, want time<<80|random = %x", id, got, want)
	}
	if tm, err := IDTime(id); err != nil || tm.UnixMilli() != 1_790_000_000_123 {
		t.Errorf("IDTime(%q) = %v, %v", id, tm, err)
	}
}

func TestIDsIncreaseAndRecordTime(t *testing.T) {
	rng := newRand(15)
	clock := &fakeClock{t: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)}
	g := NewIDGenerator(clock.now, rand.NewChaCha8([32]byte{1}))
	prev := ""
	var prevMS int64
	seen := map[string]bool{}
	for i := 0; i < 20000; i++ {
		switch rng.IntN(10) {
		case 0:
			clock.set(clock.now().Add(-time.Duration(rng.IntN(5)) * time.Millisecond)) // clock steps back
		case 1, 2, 3:
			// same millisecond
		default:
			clock.set(clock.now().Add(time.Duration(rng.IntN(3000)) * time.Microsecond))
		}
		id, err := g.New()
		if err != nil {
			t.Fatal(err)
		}
		if seen[id] || !(prev < id) || (prev != "" && Compare(prev, id) != -1) {
			t.Fatalf("id %d %q does not follow %q", i, id, prev)
		}
		seen[id] = true
		tm, err := IDTime(id)
		if err != nil {
			t.Fatal(err)
		}
		// The recorded time is the clock's millisecond, or the previous
		// id's when the clock went back.
		want := max(clock.now().UnixMilli(), prevMS)
		if tm.UnixMilli() != want {
			t.Fatalf("IDTime(%q) = %d ms, want %d", id, tm.UnixMilli(), want)
		}
		if ValidKey(id) != nil {
			t.Fatalf("id %q is not a legal key", id)
		}
		prev, prevMS = id, tm.UnixMilli()
	}
}

func TestIDRandomOverflowMovesToNextMillisecond(t *testing.T) {
	clock := &fakeClock{t: time.UnixMilli(5000)}
	g := NewIDGenerator(clock.now, bytes.NewReader(bytes.Repeat([]byte{0xFF}, 30)))
	a, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.New() // random part is all ones: +1 overflows
	if err != nil {
		t.Fatal(err)
	}
	ta, _ := IDTime(a)
	tb, _ := IDTime(b)
	if !(a < b) || ta.UnixMilli() != 5000 || tb.UnixMilli() != 5001 {
		t.Errorf("after overflow: %q (%d ms) then %q (%d ms), want the second one millisecond later", a, ta.UnixMilli(), b, tb.UnixMilli())
	}
}

func TestIDGeneratorErrors(t *testing.T) {
	before := NewIDGenerator(func() time.Time { return time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC) }, nil)
	if _, err := before.New(); !errors.Is(err, ErrOutOfRange) || !strings.Contains(err.Error(), "1969-12-31T23:59:59Z") {
		t.Errorf("clock before 1970: %v, want ErrOutOfRange naming the time", err)
	}
	after := NewIDGenerator(func() time.Time { return time.UnixMilli(1 << 48) }, nil)
	if _, err := after.New(); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("clock past 48 bits: %v, want ErrOutOfRange", err)
	}
	short := NewIDGenerator(nil, bytes.NewReader([]byte{1, 2, 3}))
	if _, err := short.New(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short random source: %v, want io.ErrUnexpectedEOF wrapped", err)
	}
	// Last millisecond with an exhausted random part has nowhere to go.
	last := NewIDGenerator(func() time.Time { return time.UnixMilli(maxIDMillis) }, bytes.NewReader(bytes.Repeat([]byte{0xFF}, 10)))
	if _, err := last.New(); err != nil {
		t.Fatal(err)
	}
	if _, err := last.New(); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("exhausted last millisecond: %v, want ErrOutOfRange", err)
	}
}

func TestIDDefaults(t *testing.T) {
	g := NewIDGenerator(nil, nil)
	id, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	tm, _ := IDTime(id)
	if d := time.Since(tm); d < -time.Second || d > time.Minute {
		t.Errorf("default clock: id time %s is not now", tm)
	}
}

func TestIDTimeRejects(t *testing.T) {
	good := "01JD0000000000000000000000"
	if _, err := IDTime(good); err != nil {
		t.Fatalf("IDTime(%q): %v", good, err)
	}
	cases := map[string]string{
		good[:25]:                    "25 characters",
		good + "0":                   "27 characters",
		"01JD000000000000000000000I": `'I' at offset 25`,
		"01JD000000000000000000000u": `'u' at offset 25`,
		"01jd0000000000000000000000": `'j' at offset 2`,
		"81JD0000000000000000000000": "starts with '8'",
		"01JD00000000000000000000-0": `'-'`,
	}
	for id, mention := range cases {
		_, err := IDTime(id)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), mention) {
			t.Errorf("IDTime(%q) = %v, want ErrMalformed mentioning %s", id, err, mention)
		}
	}
}

func TestIDGeneratorConcurrent(t *testing.T) {
	g := NewIDGenerator(nil, rand.NewChaCha8([32]byte{2}))
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prev := ""
			for i := 0; i < 500; i++ {
				id, err := g.New()
				if err != nil {
					t.Error(err)
					return
				}
				if !(prev < id) {
					t.Errorf("ids of one goroutine went backwards: %q then %q", prev, id)
				}
				prev = id
				mu.Lock()
				if seen[id] {
					t.Errorf("duplicate id %q", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// failingReader serves its bytes, then fails.
type failingReader struct{ data []byte }

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, errors.New("entropy gone")
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestIDFailedReadKeepsOrder(t *testing.T) {
	// First id: random part all 0xFF, so the second call overflows and must
	// read fresh randomness for the next millisecond; that read fails after
	// 4 bytes of zeros. A third call must still produce a larger id.
	src := &failingReader{data: append(bytes.Repeat([]byte{0xFF}, 10), 0, 0, 0, 0)}
	clock := &fakeClock{t: time.UnixMilli(9000)}
	g := NewIDGenerator(clock.now, src)
	first, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.New(); err == nil || !strings.Contains(err.Error(), "entropy gone") {
		t.Fatalf("second id: %v, want the reader's error", err)
	}
	src.data = bytes.Repeat([]byte{0x00}, 10)
	third, err := g.New()
	if err != nil {
		t.Fatal(err)
	}
	if !(first < third) {
		t.Errorf("after a failed read the next id %q sorts before the earlier %q", third, first)
	}
}
