package large

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/store"
)

// Writers racing on one entity, each with its own Store (as separate
// processes would have), with readers alongside: every read sees one
// written version whole (its body and scan from the same write), the
// last version stands, and no blob is left behind, since every committed
// write removed the blobs of the version it replaced and every loser's
// fresh blobs were reused or removed.
func TestConcurrentWritersOfOneEntity(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		writers, each := 6, 8
		if b.Short() {
			writers, each = 4, 5
		}
		sizes := []int{100, 20_000, 70_000, 150_000}
		var committed atomic.Int64
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var reads, readErrs atomic.Int64
		for r := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := e.store(t, nil, Options{})
				for {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					d, err := s.Get(t.Context(), "p", "doc")
					if errors.Is(err, store.ErrNotFound) && !errors.Is(err, ErrMissingBlob) {
						continue
					}
					reads.Add(1)
					if err != nil {
						readErrs.Add(1)
						t.Errorf("reader %d: %v", r, err)
						return
					}
					if err := whole(&d); err != nil {
						t.Errorf("reader %d: %v", r, err)
						return
					}
				}
			}()
		}
		var ww sync.WaitGroup
		for w := range writers {
			ww.Add(1)
			go func() {
				defer ww.Done()
				s := e.store(t, nil, Options{Compress: w == 0, Attempts: 200})
				rng := rand.New(rand.NewPCG(uint64(w), 11))
				for i := range each {
					d := version(w, i, sizes[rng.IntN(len(sizes))], sizes[rng.IntN(len(sizes))])
					if err := s.Put(t.Context(), &d); err != nil {
						t.Errorf("writer %d, write %d: %v", w, i, err)
						return
					}
					committed.Add(1)
				}
			}()
		}
		ww.Wait()
		close(stop)
		wg.Wait()
		s := e.store(t, nil, Options{})
		d, err := s.Get(t.Context(), "p", "doc")
		if err != nil {
			t.Fatal(err)
		}
		if err := whole(&d); err != nil {
			t.Fatal(err)
		}
		refs := e.refs(t, s, "p", "doc")
		blobs := e.blobs(t)
		slices.Sort(blobs)
		t.Logf("%s: %d writers x %d puts: %d committed, last %q; %d reads, %d failed; %d blobs left, %d referenced",
			b.Name, writers, each, committed.Load(), d.Title, reads.Load(), readErrs.Load(), len(blobs), len(refs))
		if committed.Load() != int64(writers*each) {
			t.Fatalf("%d of %d writes committed", committed.Load(), writers*each)
		}
		if !slices.Equal(blobs, refs) {
			t.Fatalf("blobs %v, references %v: a write left blobs behind", blobs, refs)
		}
	})
}

// version is write i of writer w: its title names it, and its body and
// scan carry the title and their own checksum, so a read can tell a
// value made of two writes.
func version(w, i, body, scan int) Doc {
	title := fmt.Sprintf("w%d-%d", w, i)
	b := title + ";" + text(uint64(w*100+i), body)
	s := append([]byte(title+";"), noise(uint64(w*100+i), scan)...)
	return Doc{Folder: "p", ID: "doc", Title: title, Pages: int32(crc32.ChecksumIEEE([]byte(b))),
		Body: b, Scan: s, Notes: map[string]string{"scan": strconv.FormatUint(uint64(crc32.ChecksumIEEE(s)), 10)}}
}

// whole checks that d's values come from one write.
func whole(d *Doc) error {
	if !strings.HasPrefix(d.Body, d.Title+";") || !bytes.HasPrefix(d.Scan, []byte(d.Title+";")) {
		return fmt.Errorf("version %q has the body of %.8q and the scan of %.8q", d.Title, d.Body, d.Scan)
	}
	if int32(crc32.ChecksumIEEE([]byte(d.Body))) != d.Pages || d.Notes["scan"] != strconv.FormatUint(uint64(crc32.ChecksumIEEE(d.Scan)), 10) {
		return fmt.Errorf("version %q: a value does not match its checksum", d.Title)
	}
	return nil
}
