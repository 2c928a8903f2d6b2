package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// concurrencyWriters is how many writers race in the concurrency subtests.
const concurrencyWriters = 8

// race runs f on concurrencyWriters goroutines at once and returns their errors.
func race(f func(i int) error) []error {
	errs := make([]error, concurrencyWriters)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range errs {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = f(i)
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// concurrency proves optimistic concurrency under racing writers: of
// several writers holding the same ETag, exactly one wins and the others
// get 412; of several transactions inserting the same row, exactly one
// wins and the others get 409.
func (s *suite) concurrency(t *testing.T) {
	s.run(t, "SameETag_ExactlyOneWins", func(t *testing.T) {
		_, tbl := s.newTable(t)
		tag := mustInsert(t, tbl, ent("p", "r", "Writer", int32(-1)))
		var (
			mu     sync.Mutex
			winner = -1
			wonTag store.ETag
		)
		errs := race(func(i int) error {
			newTag, err := tbl.Update(t.Context(), ent("p", "r", "Writer", int32(i)), store.Replace, tag)
			if err == nil {
				mu.Lock()
				winner, wonTag = i, newTag
				mu.Unlock()
			}
			return err
		})
		wins := 0
		for i, err := range errs {
			if err == nil {
				wins++
				continue
			}
			if !wantErr(t, err, store.CodeUpdateConditionNotSatisfied, 412, noIndex) {
				t.Logf("writer %d", i)
			}
		}
		if wins != 1 {
			t.Fatalf("%d writers won with the same ETag, want exactly 1", wins)
		}
		got := mustGet(t, tbl, "p", "r")
		wantProps(t, "after the race", got.Properties, map[string]any{"Writer": int32(winner)})
		if got.ETag != wonTag {
			t.Errorf("the winner got ETag %s, the entity has %s", wonTag, got.ETag)
		}
	})

	s.run(t, "SameRowInBatches_ExactlyOneWins", func(t *testing.T) {
		_, tbl := s.newTable(t)
		errs := race(func(i int) error {
			_, err := tbl.Transact(t.Context(), []store.Action{
				{Kind: store.ActionInsert, Entity: ent("p", fmt.Sprintf("own%d", i))},
				{Kind: store.ActionInsert, Entity: ent("p", "shared", "Writer", int32(i))},
			})
			return err
		})
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("writers %d and %d both inserted the shared row", winner, i)
				}
				winner = i
				continue
			}
			if !wantErr(t, err, store.CodeEntityAlreadyExists, 409, 1) {
				t.Logf("writer %d", i)
			}
		}
		if winner < 0 {
			t.Fatal("no transaction won")
		}
		// Only the winner's own row exists: the losers left no trace.
		wantKeys(t, tbl, key{"p", fmt.Sprintf("own%d", winner)}, key{"p", "shared"})
		wantProps(t, "shared row", mustGet(t, tbl, "p", "shared").Properties, map[string]any{"Writer": int32(winner)})
	})
}
