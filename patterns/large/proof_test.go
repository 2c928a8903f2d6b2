package large

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/prooftest"
	"github.com/tablekit/tablekit/store"
)

// TestProofSeededFaults: writers each put and delete their own documents
// (a large body and scan in blobs beside the entity) again and again
// while about one request in seven meets a seeded fault: on memstore and
// on Azurite through storetest's kit (typed lane kept; table and blob
// requests faulted), and on Azurite through fault proxies on the table
// and blob endpoints. A put that succeeded must be readable whole at
// once, one that failed must not be, and an unknown outcome is settled
// by reading (putting again when absent). At the end every document is
// its writer's last acknowledged put, whole (its blobs hold that put's
// body and scan, never an older one's), and a sweep past the grace
// period leaves exactly the referenced blobs: lost 0, duplicated 0
// (orphans left after the sweep), mixed 0.
func TestProofSeededFaults(t *testing.T) {
	run := func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, fs *prooftest.Faults) {
		ctx := context.Background()
		const writers, mine = 3, 2
		each := 12
		if testing.Short() {
			each = 6
		}
		e := newEnv(t, b)
		clean := e.store(t, nil, Options{})
		doc := func(w, id, i int) *Doc {
			seed := uint64(1000*w + 10*i + id)
			return &Doc{Folder: "f", ID: fmt.Sprintf("d%d", id), Title: fmt.Sprintf("T%d-%d", w, i), Pages: int32(i),
				Body: text(seed, 40_000+int(seed%7)*9_000), Scan: noise(seed, 30_000)}
		}
		var mu sync.Mutex
		outcomes := map[string]int{}
		note := func(k string) { mu.Lock(); outcomes[k]++; mu.Unlock() }
		mixed := 0
		// title reads a document whole ("" when absent) and counts it
		// mixed when its blobs are not those of the put that named it.
		title := func(w, id int) string {
			got, err := clean.Get(ctx, "f", fmt.Sprintf("d%d", id))
			if errors.Is(err, store.ErrNotFound) && !errors.Is(err, ErrMissingBlob) {
				return ""
			}
			if err != nil {
				t.Errorf("%s: d%d does not resolve: %v", label, id, err)
				return "?"
			}
			var i int
			if _, err := fmt.Sscanf(got.Title, "T%d-%d", new(int), &i); err != nil {
				t.Errorf("%s: d%d has title %q", label, id, got.Title)
				return "?"
			}
			if want := doc(w, id, i); got.Body != want.Body || !slices.Equal(got.Scan, want.Scan) {
				mu.Lock()
				mixed++
				mu.Unlock()
				t.Errorf("%s: d%d titled %s holds another put's blobs", label, id, got.Title)
			}
			return got.Title
		}
		want := make([]string, writers*mine)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				s := e.store(t, faulty, Options{})
				for i := range each {
					id := w*mine + i%mine
					v := doc(w, id, i)
					remove := i%5 == 4 && i < each-2
					target := v.Title
					if remove {
						target = ""
					}
					for try := 0; ; try++ {
						var err error
						if remove {
							err = s.DeleteKey(ctx, "f", v.ID)
						} else {
							err = s.Put(ctx, v)
						}
						kind := "done"
						switch {
						case err == nil:
						case errors.Is(err, store.ErrUnknownOutcome):
							kind = "unknown"
						default:
							kind = "failed"
						}
						note(kind)
						got := title(w, id)
						if kind == "done" && got != target || kind == "failed" && !remove && got == target {
							t.Errorf("%s: %s of d%d %s (%v), the store holds %q", label, v.Title, id, kind, err, got)
							return
						}
						if got == target {
							want[id] = target
							break
						}
						if try > 50 {
							t.Errorf("%s: %s of d%d never stored", label, v.Title, id)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		lost := 0
		for id, tt := range want {
			if got := title(id/mine, id); got != tt {
				lost++
				t.Errorf("%s: d%d holds %q, the last acknowledged put %q", label, id, got, tt)
			}
		}
		rep, err := e.later(t).Sweep(ctx, SweepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var referenced []string
		for id := range want {
			referenced = append(referenced, e.refs(t, clean, "f", fmt.Sprintf("d%d", id))...)
		}
		slices.Sort(referenced)
		left := e.blobs(t)
		slices.Sort(left)
		orphans, missing := 0, 0
		for _, n := range left {
			if _, ok := slices.BinarySearch(referenced, n); !ok {
				orphans++
			}
		}
		for _, n := range referenced {
			if _, ok := slices.BinarySearch(left, n); !ok {
				missing++
			}
		}
		for id := range want {
			title(id/mine, id)
		}
		t.Logf("%s: %d writers x %d writes, faults %d %v; outcomes %v; sweep: %v; %d blobs left, all referenced: lost %d (blobs %d), duplicated %d, mixed %d",
			label, writers, each, fs.Total(), fs.Counts(), outcomes, rep, len(left), lost, missing, orphans, mixed)
		if lost+missing+orphans+mixed != 0 {
			t.Fatal("the store does not match the acknowledged writes")
		}
		if fs.Total() == 0 {
			t.Fatal("no fault was injected")
		}
	}
	prooftest.Each(t, []string{"Table.", "Container."}, []string{"table", "blob"}, func(t *testing.T, b backendtest.Backend, label string, faulty store.Store, f *prooftest.Faults) {
		run(t, b, label, faulty, f)
	})
}
