package logtail

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// appendN appends n claims one second apart from t0 (claim i has Amount i).
func appendN(t *testing.T, s *Stream[claim], n int) []Event[claim] {
	t.Helper()
	var out []Event[claim]
	for i := range n {
		ev, err := s.AppendAt(t.Context(), t0.Add(time.Duration(i)*time.Second), claim{Amount: float64(i)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// amounts lists the events' amounts.
func amounts(evs []Event[claim]) []float64 {
	var out []float64
	for _, ev := range evs {
		out = append(out, ev.Value.Amount)
	}
	return out
}

// falling returns hi-1, hi-2, ..., lo.
func falling(hi, lo int) []float64 {
	var out []float64
	for i := hi - 1; i >= lo; i-- {
		out = append(out, float64(i))
	}
	return out
}

func TestLatestIsNewestFirst(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		s, _ := newStream(t, b, "emp000123")
		appended := appendN(t, s, 25)
		last, err := s.Latest(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := amounts(last), falling(25, 15); !slices.Equal(got, want) {
			t.Fatalf("Latest(10) = %v, want %v", got, want)
		}
		for _, ev := range last {
			i := int(ev.Value.Amount)
			if !ev.Time.Equal(t0.Add(time.Duration(i)*time.Second)) || ev.Key != appended[i].Key {
				t.Fatalf("event %d: time %s key %q, want %s %q", i, ev.Time, ev.Key, t0.Add(time.Duration(i)*time.Second), appended[i].Key)
			}
			if ev.Value.Employee != "emp000123" || ev.Value.Key != ev.Key || ev.Value.ETag == "" {
				t.Fatalf("event %d: key fields %q/%q, ETag %q: want the stream's keys and an ETag", i, ev.Value.Employee, ev.Value.Key, ev.Value.ETag)
			}
		}
		all, err := s.Latest(t.Context(), 1000)
		if err != nil || !slices.Equal(amounts(all), falling(25, 0)) {
			t.Fatalf("Latest(1000) = %v, %v", amounts(all), err)
		}
		for _, n := range []int{0, -1, 1001} {
			if _, err := s.Latest(t.Context(), n); err == nil || !strings.Contains(err.Error(), "1 to 1000") {
				t.Errorf("Latest(%d) = %v, want an error naming the range 1 to 1000", n, err)
			}
		}
	})
}

func TestLatestFillsAcrossShortPages(t *testing.T) {
	for seed := range uint64(20) {
		b := backendtest.Memstore(memstore.WithShortPages(seed))
		s, _ := newStream(t, b, "p")
		appendN(t, s, 30)
		last, err := s.Latest(t.Context(), 12)
		if err != nil || !slices.Equal(amounts(last), falling(30, 18)) {
			t.Fatalf("seed %d: Latest(12) = %v, %v", seed, amounts(last), err)
		}
		if got := collect(t, s.Before(t.Context(), time.Time{})); !slices.Equal(amounts(got), falling(30, 0)) {
			t.Fatalf("seed %d: Before(zero) = %v", seed, amounts(got))
		}
	}
}

func TestReadsRowsDotNetWrote(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		s, tbl := newStream(t, b, "emp000123")
		// Go events at even seconds, .NET rows at odd seconds: the bare
		// 19-digit key of the guide, and one with a suffix of its own.
		for i := range 12 {
			at := t0.Add(time.Duration(i) * time.Second)
			if i%2 == 0 {
				if _, err := s.AppendAt(t.Context(), at, claim{Amount: float64(i)}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			rk := dotNetKey(at)
			if i == 7 {
				rk += "_6f9619ff8b86d011b42d00c04fc964ff"
			}
			e := store.Entity{PartitionKey: "emp000123", RowKey: rk, Properties: map[string]any{"Amount": float64(i), "Note": "written by .NET"}}
			if _, err := tbl.Insert(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		}
		last, err := s.Latest(t.Context(), 5)
		if err != nil || !slices.Equal(amounts(last), falling(12, 7)) {
			t.Fatalf("Latest(5) = %v, %v; want 11 down to 7", amounts(last), err)
		}
		for _, ev := range last {
			i := int(ev.Value.Amount)
			if !ev.Time.Equal(t0.Add(time.Duration(i) * time.Second)) {
				t.Fatalf("event %d: time %s", i, ev.Time)
			}
			if (i%2 == 1) != (ev.Value.Note == "written by .NET") {
				t.Fatalf("event %d: note %q", i, ev.Value.Note)
			}
		}
		if got := collect(t, s.Since(t.Context(), t0.Add(3*time.Second))); !slices.Equal(amounts(got), falling(12, 3)) {
			t.Fatalf("Since(t0+3s) = %v", amounts(got))
		}
	})
}

func TestSinceBeforeAndPages(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		s, _ := newStream(t, b, "p")
		appendN(t, s, 25)
		ctx := t.Context()
		// Since is inclusive to the tick, Before exclusive.
		if got := collect(t, s.Since(ctx, t0.Add(20*time.Second))); !slices.Equal(amounts(got), falling(25, 20)) {
			t.Fatalf("Since(t0+20s) = %v", amounts(got))
		}
		if got := collect(t, s.Since(ctx, t0.Add(20*time.Second+50*time.Nanosecond))); !slices.Equal(amounts(got), falling(25, 20)) {
			t.Fatalf("Since(t0+20s+50ns), same tick = %v", amounts(got))
		}
		if got := collect(t, s.Since(ctx, t0.Add(20*time.Second+100*time.Nanosecond))); !slices.Equal(amounts(got), falling(25, 21)) {
			t.Fatalf("Since(t0+20s+1 tick) = %v", amounts(got))
		}
		if got := collect(t, s.Before(ctx, t0.Add(5*time.Second))); !slices.Equal(amounts(got), falling(5, 0)) {
			t.Fatalf("Before(t0+5s) = %v", amounts(got))
		}
		// Pages of 7 walk back in time; appending between pages does not
		// shift the later pages.
		var got []float64
		var lastKey string
		token, pages := "", 0
		for {
			p, err := s.Page(ctx, token, 7)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			got = append(got, amounts(p.Events)...)
			lastKey = p.Events[len(p.Events)-1].Key
			if pages == 1 {
				if _, err := s.AppendAt(ctx, t0.Add(time.Hour), claim{Amount: 999}); err != nil {
					t.Fatal(err)
				}
			}
			if p.Next == "" {
				break
			}
			token = p.Next
		}
		if !slices.Equal(got, falling(25, 0)) || pages != 4 {
			t.Fatalf("pages of 7: %d pages %v", pages, got)
		}
		first, err := s.Page(ctx, "", 7)
		if err != nil || first.Events[0].Value.Amount != 999 {
			t.Fatalf("a fresh first page starts with the new event: %v %v", amounts(first.Events), err)
		}
		// A token is the last key returned; one that is not base64 or not a
		// key of the stream is refused.
		oldest := base64.RawURLEncoding.EncodeToString([]byte(lastKey))
		if p, err := s.Page(ctx, oldest, 7); err != nil || len(p.Events) != 0 || p.Next != "" {
			t.Fatalf("page after the oldest event: %v, %v", amounts(p.Events), err)
		}
		for _, bad := range []string{"!!", base64.RawURLEncoding.EncodeToString([]byte("x"))} {
			if _, err := s.Page(ctx, bad, 7); err == nil || !strings.Contains(err.Error(), "page token") {
				t.Errorf("Page(%q) = %v, want a page token error", bad, err)
			}
		}
		for _, size := range []int{0, 1001} {
			if _, err := s.Page(ctx, "", size); err == nil {
				t.Errorf("Page size %d accepted", size)
			}
		}
	})
}

func TestPrefixSharesThePartitionWithOtherKinds(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		s, tbl := newStream(t, b, "emp000123", Options{Prefix: "claim_"})
		for _, rk := range []string{"!fence", "claim_", "claim_~", "profile", "claim!"} {
			if _, err := tbl.Insert(t.Context(), store.Entity{PartitionKey: "emp000123", RowKey: rk, Properties: map[string]any{"Note": "other kind"}}); err != nil {
				t.Fatal(err)
			}
		}
		appendN(t, s, 5)
		last, err := s.Latest(t.Context(), 10)
		if err != nil || !slices.Equal(amounts(last), falling(5, 0)) {
			t.Fatalf("Latest(10) next to other kinds = %v, %v", amounts(last), err)
		}
		for _, ev := range last {
			if !strings.HasPrefix(ev.Key, "claim_") {
				t.Fatalf("key %q lacks the prefix", ev.Key)
			}
		}
		// A row inside the stream's range that is not an event is reported,
		// not skipped and not misread.
		if _, err := tbl.Insert(t.Context(), store.Entity{PartitionKey: "emp000123", RowKey: "claim_12", Properties: map[string]any{"Amount": 1.0}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Latest(t.Context(), 10); !errors.Is(err, ErrForeignRow) || !strings.Contains(err.Error(), `"claim_12"`) {
			t.Fatalf("Latest over a foreign row = %v, want ErrForeignRow naming it", err)
		}
		n, foreign := 0, 0
		for _, err := range s.Before(t.Context(), time.Time{}) {
			if errors.Is(err, ErrForeignRow) {
				foreign++
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 5 || foreign != 1 {
			t.Fatalf("iterator: %d events and %d foreign rows, want 5 and 1", n, foreign)
		}
	})
}

func TestBadInputIsRefusedAndNothingWritten(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		tbl := b.Store.Table(b.NewTable(t, "logtailbad"))
		for _, tc := range []struct {
			pk   string
			opts *Options
			want string
		}{
			{"emp/123", nil, `"emp/123" contains '/'`},
			{"emp", &Options{Prefix: "c#"}, `"c#" contains '#'`},
			{"emp", &Options{Prefix: strings.Repeat("p", 1000)}, "Options.Prefix"},
			{"emp", &Options{Prefix: strings.Repeat("p", 1000)}, "limit of 1024"},
			{"emp", &Options{Attempts: -1}, "Options.Attempts -1: want 0 (the default, 4) or more"},
		} {
			if _, err := New[claim](tbl, tc.pk, tc.opts); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New(%q): %v, want an error containing %s", tc.pk, err, tc.want)
			}
		}
		type keyless struct{ Amount float64 }
		if _, err := New[keyless](tbl, "emp", nil); err == nil || !strings.Contains(err.Error(), "no PartitionKey") {
			t.Errorf("New[keyless]: %v", err)
		}
		s, err := New[claim](tbl, "emp", &Options{Sleep: noSleep})
		if err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("x", store.MaxStringUnits+1)
		_, err = s.Append(t.Context(), claim{Note: big})
		if !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "Note") || !strings.Contains(err.Error(), fmt.Sprint(store.MaxStringUnits)) {
			t.Errorf("oversized note: %v, want ErrTooLarge naming Note and the limit", err)
		}
		_, err = s.AppendAt(t.Context(), time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC), claim{Amount: 1})
		if err == nil || !strings.Contains(err.Error(), "outside the .NET DateTime range") {
			t.Errorf("time before year 1: %v", err)
		}
		if n := countRows(t, tbl, "emp"); n != 0 {
			t.Fatalf("%d rows written by refused appends", n)
		}
		for _, err := range s.Since(t.Context(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) {
			if err == nil || !strings.Contains(err.Error(), "outside the .NET DateTime range") {
				t.Errorf("Since(year 10000): %v", err)
			}
		}
	})
}

func TestNewestFirstSortsLikeTheService(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		s, _ := newStream(t, b, "p")
		appendN(t, s, 10)
		want, err := s.Latest(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		shuffled := slices.Clone(want)
		slices.Reverse(shuffled)
		shuffled[0], shuffled[4] = shuffled[4], shuffled[0]
		slices.SortFunc(shuffled, NewestFirst[claim])
		if !slices.EqualFunc(shuffled, want, func(a, b Event[claim]) bool { return a.Key == b.Key }) {
			t.Fatalf("NewestFirst order differs from the service's")
		}
	})
}
