package memstore

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/store"
)

// randomValue returns a random valid value of a random property type,
// edge values included.
func randomValue(rng *rand.Rand) any {
	switch rng.IntN(8) {
	case 0:
		alphabet := []rune{'a', 'Z', ' ', '\'', 0xE9, 0x4E2D, 0xFFFD, 0x1F600}
		r := make([]rune, rng.IntN(12))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	case 1:
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	case 2:
		return rng.IntN(2) == 1
	case 3:
		return []int32{math.MinInt32, math.MaxInt32, 0, -1, int32(rng.Uint32())}[rng.IntN(5)]
	case 4:
		return []int64{math.MinInt64, math.MaxInt64, 0, int64(rng.Uint64())}[rng.IntN(4)]
	case 5:
		return []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64, rng.NormFloat64()}[rng.IntN(7)]
	case 6:
		sec := store.MinTime.Unix() + rng.Int64N(store.MaxTime.Unix()-store.MinTime.Unix())
		return time.Unix(sec, rng.Int64N(1e7)*100).UTC()
	default:
		var g store.GUID
		for i := range g {
			g[i] = byte(rng.UintN(256))
		}
		return g
	}
}

func TestRecordRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for i := range 2000 {
		props := map[string]any{}
		for j := range rng.IntN(12) {
			props[string(rune('A'+j))+"p"] = randomValue(rng)
		}
		r := newRecord("pk", "rk", int64(i), props)
		got := r.entity(nil).Properties
		if len(props) == 0 && len(got) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, props) {
			t.Fatalf("round trip changed properties:\n got %#v\nwant %#v", got, props)
		}
		if r.nprops() != len(props) || len(r) != cap(r) || len(r) != recordLen(r) || r.pk() != "pk" || r.rk() != "rk" || r.ts() != int64(i) {
			t.Fatalf("nprops = %d, want %d; %d bytes in a buffer of %d (header says %d); keys (%q, %q)", r.nprops(), len(props), len(r), cap(r), recordLen(r), r.pk(), r.rk())
		}
	}
}

func TestRecordNilNotStoredAndBinaryCopied(t *testing.T) {
	b := []byte{1, 2, 3}
	r := newRecord("", "", 0, map[string]any{"Gone": nil, "Bin": b})
	e := r.entity(nil)
	if _, ok := e.Properties["Gone"]; ok {
		t.Fatal("a nil property was stored")
	}
	b[0] = 9 // the caller's slice must not alias storage
	got := e.Properties["Bin"].([]byte)
	got[1] = 9 // nor the reader's
	if again := r.entity(nil).Properties["Bin"].([]byte); !reflect.DeepEqual(again, []byte{1, 2, 3}) {
		t.Fatalf("stored binary changed to %v", again)
	}
}

func TestTicksConversion(t *testing.T) {
	for _, tm := range []time.Time{store.MinTime, store.MaxTime, time.Unix(0, 0).UTC(), time.Date(1969, 12, 31, 23, 59, 59, 999999900, time.UTC)} {
		if got := ticksToTime(timeToTicks(tm)); !got.Equal(tm) {
			t.Fatalf("ticks round trip of %v gave %v", tm, got)
		}
	}
	if timeToTicks(time.Unix(0, 0)) != 621355968000000000 {
		t.Fatal("Unix epoch must be 621355968000000000 .NET ticks")
	}
}

func TestETagFormat(t *testing.T) {
	r := newRecord("p", "r", time.Date(2024, 5, 14, 22, 30, 12, 873365800, time.UTC).UnixNano(), nil)
	want := store.ETag(`W/"datetime'2024-05-14T22%3A30%3A12.8733658Z'"`)
	if r.etag() != want {
		t.Fatalf("etag %s, want %s", r.etag(), want)
	}
	if err := store.ValidateETag(r.etag()); err != nil {
		t.Fatal(err)
	}
}

// TestETagFormatMatchesLayout: the hand-written ETag formatting agrees
// with the service's layout over a spread of times, whole seconds
// included (write times are Unix nanoseconds: 1678 to 2262).
func TestETagFormatMatchesLayout(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		time.Date(2026, 11, 24, 9, 5, 7, 100, time.UTC),
		time.Date(2261, 6, 30, 12, 0, 0, 0, time.UTC),
	} {
		ts := strings.ReplaceAll(tm.Format("2006-01-02T15:04:05.0000000Z"), ":", "%3A")
		want := store.ETag(`W/"datetime'` + ts + `'"`)
		if got := etagAt(tm.UnixNano()); got != want {
			t.Errorf("etagAt(%v) = %s, want %s", tm, got, want)
		}
	}
}
