package logtail

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/memstore"
)

// dotNetKey is the guide's C# RowKey, computed without package keys:
// string.Format("{0:D19}", DateTime.MaxValue.Ticks - t.Ticks).
func dotNetKey(t time.Time) string {
	const maxValueTicks = 3155378975999999999 // DateTime.MaxValue.Ticks
	const unixEpochSeconds = 62135596800      // seconds from 0001-01-01 to 1970-01-01
	ticks := (t.Unix()+unixEpochSeconds)*10_000_000 + int64(t.Nanosecond()/100)
	return fmt.Sprintf("%019d", maxValueTicks-ticks)
}

func TestKeyStartsWithDotNetInvertedTicks(t *testing.T) {
	for _, tm := range []time.Time{t0, t0.Add(123456789 * time.Nanosecond), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)} {
		k, err := makeKey("", tm, "SUFFIX")
		if err != nil {
			t.Fatal(err)
		}
		if want := dotNetKey(tm); !strings.HasPrefix(k, want) || len(want) != ticksLen {
			t.Fatalf("key %q for %s: want the .NET inverted ticks %q first", k, tm, want)
		}
		got, err := parseKey("", k)
		if err != nil || !got.Equal(tm.Truncate(100*time.Nanosecond)) {
			t.Fatalf("parseKey(%q) = %s, %v; want %s", k, got, err, tm)
		}
		// The bare .NET key parses to the same time.
		if got, err := parseKey("", dotNetKey(tm)); err != nil || !got.Equal(tm.Truncate(100*time.Nanosecond)) {
			t.Fatalf("parseKey(.NET %q) = %s, %v", dotNetKey(tm), got, err)
		}
	}
}

func TestKeysSortNewestFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := keys.NewIDGenerator(func() time.Time { return t0 }, nil)
	var prev string
	tm := t0
	for range 2000 {
		tm = tm.Add(-time.Duration(rng.IntN(1000)+1) * 100) // falling times, 1 to 1,000 ticks apart
		id, err := gen.New()
		if err != nil {
			t.Fatal(err)
		}
		suffix, err := invertID(id)
		if err != nil {
			t.Fatal(err)
		}
		k, err := makeKey("c_", tm, suffix)
		if err != nil {
			t.Fatal(err)
		}
		if prev != "" && keys.Compare(prev, k) >= 0 {
			t.Fatalf("key %q of an older event does not sort after %q", k, prev)
		}
		prev = k
	}
}

func TestSameTickKeysOfOneWriterSortNewestFirst(t *testing.T) {
	// One stream's suffix generator counts up, so its mirrored suffixes
	// count down: of two events in one tick, the later sorts first.
	s, err := New[claim](memstore.New().Table("keys"), "p", nil) // no I/O: the table is never used
	if err != nil {
		t.Fatal(err)
	}
	var prev string
	for range 1000 {
		k, err := s.newKey(t0)
		if err != nil {
			t.Fatal(err)
		}
		if len(k) != eventKeyLen || !strings.HasPrefix(k, dotNetKey(t0)+" !") {
			t.Fatalf("key %q: want the 19 ticks digits, the separator and %d suffix characters", k, suffixLen)
		}
		if prev != "" && keys.Compare(k, prev) >= 0 {
			t.Fatalf("later event %q does not sort before %q", k, prev)
		}
		if err := keys.ValidKey(k); err != nil {
			t.Fatal(err)
		}
		prev = k
	}
	// Two streams' suffixes start far apart.
	s2, _ := New[claim](memstore.New().Table("keys"), "p", nil)
	k2, _ := s2.newKey(t0)
	if k2 == prev {
		t.Fatalf("two streams made the same key %q", k2)
	}
}

func TestParseKeyRefusesForeignKeys(t *testing.T) {
	for _, k := range []string{"", "12", "x_3155378975999999999", "c_315537897599999999a", "c_9999999999999999999"} {
		if _, err := parseKey("c_", k); !errors.Is(err, ErrForeignRow) {
			t.Errorf("parseKey(%q) = %v, want ErrForeignRow", k, err)
		}
	}
	if _, err := invertID("0I"); err == nil {
		t.Error("invertID accepted 'I', which is outside the id alphabet")
	}
}

func TestStreamRangeHoldsEveryKeyAndNoOther(t *testing.T) {
	r := streamRange("c_")
	k, _ := makeKey("c_", t0, "ABC")
	for key, want := range map[string]bool{
		k: true, "c_" + dotNetKey(t0): true, "c_0000000000000000000": true, "c_3155378975999999999": true,
		"c_": false, "c_!fence": false, "c_~": false, "d_0": false, "": false,
	} {
		if got := r.Contains(key); got != want {
			t.Errorf("range %s contains %q = %v, want %v", r, key, got, want)
		}
	}
}
