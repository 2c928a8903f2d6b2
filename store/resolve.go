package store

import (
	"bytes"
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// Resolution is what a read-back learned about a write whose answer was
// lost.
type Resolution int

const (
	// Unresolved: the read-back failed, or what it found fits both
	// "applied" and "not applied" (another writer changed the rows since).
	Unresolved Resolution = iota
	// Applied: the write took effect.
	Applied
	// NotApplied: the write did not take effect (when it was read back).
	NotApplied
)

// String names the resolution.
func (r Resolution) String() string {
	switch r {
	case Applied:
		return "applied"
	case NotApplied:
		return "not applied"
	}
	return "unresolved"
}

// resolveParallel bounds the reads of one resolution.
const resolveParallel = 8

// Resolve reads back the rows of a write whose outcome is unknown (one
// action for a single operation, or the actions of a transaction, all of
// one partition) and decides whether it was applied. With Applied, the
// results carry each row's ETag as read back ("" for a delete).
//
// A transaction is atomic, so the rows are evidence about one event:
//
//   - a conditional update or delete (If-Match E) whose row still has the
//     ETag E proves "not applied": every write changes a row's ETag;
//   - a row an insert, upsert or update would have written that is absent
//     fits "not applied"; a row present with what was written (all of it
//     for an insert or replace, the merged properties for a merge) fits
//     "applied";
//   - a deleted row that is absent fits "applied"; present, it fits "not
//     applied" for an unconditional delete.
//
// Resolve answers Applied or NotApplied when every row agrees, and
// Unresolved when they disagree or a read fails (the error is returned).
// The rows are read as they are now: a single writer of its rows always
// gets a decided answer, but another writer that changed the same rows in
// between can make the evidence agree with the wrong answer only by
// writing exactly what this write would have written (then the rows hold
// that value either way).
//
// After a client-side timeout the request may still be travelling to the
// service: a NotApplied answer is true of the moment of the read. The
// backends call Resolve only once the request has ended (an answer, an
// error, or a closed connection).
func Resolve(ctx context.Context, t Table, actions []Action) (res Resolution, results []ActionResult, err error) {
	ctx, fin := Observe(ctx, t, Operation{Name: "store.Resolve", Table: nameOf(t), Batch: len(actions)})
	defer func() { fin.Finish(err, 0) }()
	return resolve(ctx, t, actions)
}

func resolve(ctx context.Context, t Table, actions []Action) (Resolution, []ActionResult, error) {
	if len(actions) == 0 {
		return Unresolved, nil, invalid("resolve: no actions")
	}
	actions, err := WithAllProperties(actions)
	if err != nil {
		return Unresolved, nil, err
	}
	rows := make([]*Entity, len(actions))
	errs := make([]error, len(actions))
	var wg sync.WaitGroup
	sem := make(chan struct{}, resolveParallel)
	for i := range actions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			e := &actions[i].Entity
			got, err := t.Get(ctx, e.PartitionKey, e.RowKey, nil)
			switch {
			case err == nil:
				rows[i] = &got
			case errors.Is(err, ErrNotFound) && Code(err) != CodeTableNotFound:
				// Absent.
			default:
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Unresolved, nil, err
		}
	}
	return judge(actions, rows)
}

// judge weighs the evidence of each row (see Resolve).
func judge(actions []Action, rows []*Entity) (Resolution, []ActionResult, error) {
	allApplied, allNot := true, true
	for i := range actions {
		applied, not, decisive := evidence(&actions[i], rows[i])
		if decisive {
			return NotApplied, nil, nil
		}
		allApplied = allApplied && applied
		allNot = allNot && not
	}
	switch {
	case allApplied:
		results := make([]ActionResult, len(actions))
		for i := range actions {
			if rows[i] != nil && actions[i].Kind != ActionDelete {
				results[i].ETag = rows[i].ETag
			}
		}
		return Applied, results, nil
	case allNot:
		return NotApplied, nil, nil
	}
	return Unresolved, nil, nil
}

// evidence says what one row fits: "applied", "not applied", and whether
// its "not applied" is proof.
func evidence(a *Action, cur *Entity) (applied, not, decisive bool) {
	if a.Kind.NeedsIfMatch() && a.IfMatch != ETagAny && cur != nil && cur.ETag == a.IfMatch {
		return false, true, true
	}
	switch a.Kind {
	case ActionDelete:
		return cur == nil, cur != nil && a.IfMatch == ETagAny, false
	case ActionInsert, ActionUpsertReplace, ActionUpdateReplace:
		if cur == nil {
			return false, true, false
		}
		return sameProperties(cur.Properties, a.Entity.Properties, true), false, false
	case ActionUpsertMerge, ActionUpdateMerge:
		if cur == nil {
			return false, true, false
		}
		return sameProperties(cur.Properties, a.Entity.Properties, false), false, false
	}
	return false, false, false
}

// sameProperties reports whether stored holds the written properties (a
// nil value means "not stored"); with exact, stored holds nothing else.
func sameProperties(stored, written map[string]any, exact bool) bool {
	n := 0
	for k, w := range written {
		if IgnoredOnWrite(k) {
			continue // the service stores no such property
		}
		if w == nil {
			if _, ok := stored[k]; ok && exact {
				return false
			}
			continue
		}
		n++
		s, ok := stored[k]
		if !ok || !SameValue(s, w) {
			return false
		}
	}
	return !exact || len(stored) == n
}

// SameValue reports whether two property values are the same stored
// value: equal type and equal value, Doubles compared bit for bit after
// the service's normalization (NaN equals NaN, -0 equals 0), times at the
// service's 100 ns precision.
func SameValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(NormalizeDouble(x)) == math.Float64bits(NormalizeDouble(y))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && NormalizeTime(x).Equal(NormalizeTime(y))
	case string, bool, int32, int64, GUID:
		return a == b
	}
	return false
}

// Idempotent reports whether sending the actions twice has the effect of
// sending them once whatever happened in between: upserts, and updates
// with If-Match * that replace. A merge with If-Match * repeats harmlessly
// too. An insert, a conditional write and any delete do not: a delete sent
// again may remove a row another writer inserted in the meantime.
func Idempotent(actions []Action) bool {
	for i := range actions {
		switch a := &actions[i]; a.Kind {
		case ActionUpsertMerge, ActionUpsertReplace:
		case ActionUpdateMerge, ActionUpdateReplace:
			if a.IfMatch != ETagAny {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Undecided returns cause, the error of a write whose outcome stays
// unknown after Resolve, with its message saying why the read-back did not
// decide: readErr when the read-back failed, or rows that changed since.
// A cause that is not a *Error comes back unchanged. The backends' lost
// answers (store/driver's Settle) and the bulk writer word it alike.
func Undecided(cause, readErr error) error {
	why := "a read-back could not tell whether it was applied (the rows changed since)"
	if readErr != nil {
		why = "the read-back failed (" + readErr.Error() + ")"
	}
	var se *Error
	if !errors.As(cause, &se) {
		return cause
	}
	c := *se
	if c.Message == "" {
		c.Message = why
	} else {
		c.Message += "; " + why
	}
	return &c
}
