package denorm

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
)

// Target names a target row: a row of someone else's that holds a copy.
// It is store.RowRef, tablekit's one table-qualified reference.
type Target = store.RowRef

// Copy is what a target row holds of a source (model.Copied): the copied
// properties under their names on the target, the source's keys and the
// version the copy was made from, the source as stored now while it
// still maps to the row, and whether the copy is behind it.
type Copy[S any] = model.Copied[S]

// Options tune a View; nil takes the defaults.
type Options struct {
	// Copies names the copies the view reads, each a CopyTo or
	// CopyToEach of the model; nil reads every copy the model declares.
	Copies []string
}

// View reads the denormalized copies of model m. It has no write of its
// own: write the sources through the model. It is safe for concurrent
// use.
type View[S any] struct {
	m      *model.Model[S]
	copies []string
}

// New returns the view of model m's copies. It refuses (an error matching
// store.ErrInvalidInput) a nil model, a model that declares no copy, and
// a name in opts.Copies the model does not declare as a copy.
func New[S any](m *model.Model[S], opts *Options) (*View[S], error) {
	if m == nil {
		return nil, refuse("the model is nil")
	}
	declared := m.CopyNames()
	if len(declared) == 0 {
		return nil, refuse("model of %s declares no copy: declare one with model.CopyTo or model.CopyToEach", m.Table())
	}
	v := &View[S]{m: m, copies: declared}
	if opts != nil && opts.Copies != nil {
		if len(opts.Copies) == 0 {
			return nil, refuse("Options.Copies is empty: nil reads every copy of the model")
		}
		for _, c := range opts.Copies {
			if !slices.Contains(declared, c) {
				return nil, refuse("Options.Copies: model of %s declares no copy %q (its copies: %s)", m.Table(), c, strings.Join(declared, ", "))
			}
		}
		v.copies = slices.Clone(opts.Copies)
	}
	return v, nil
}

// Model returns the model the view reads: write the sources through it.
func (v *View[S]) Model() *model.Model[S] { return v.m }

// Copies returns the names of the copies the view reads.
func (v *View[S]) Copies() []string { return slices.Clone(v.copies) }

func (v *View[S]) copy(name string) error {
	if !slices.Contains(v.copies, name) {
		return refuse("the view reads no copy %q (its copies: %s)", name, strings.Join(v.copies, ", "))
	}
	return nil
}

// SourceOf reads what row (pk, rk) of table holds of copy name: the copy
// and the source it names (Copy.Entity, the source as stored now, nil when
// the source is gone or maps elsewhere). A row that holds no copy, or a
// missing row, is an error matching store.ErrNotFound. Two point reads
// (model.CopyAt).
func (v *View[S]) SourceOf(ctx context.Context, name, table, pk, rk string) (*Copy[S], error) {
	if err := v.copy(name); err != nil {
		return nil, err
	}
	return v.m.CopyAt(ctx, name, Target{Table: table, PartitionKey: pk, RowKey: rk})
}

// Held is one target of a source and what it holds (Targets).
type Held[S any] struct {
	// Target is a row the source maps to.
	Target Target
	// Copy is what the row holds of the copy (perhaps another source's:
	// Copy.ID); nil when it holds none or does not exist.
	Copy *Copy[S]
	// Current reports that the row holds this source's copy at its
	// version now: false while the engine has not run its latest write,
	// for a row made since, and for a row another source holds.
	Current bool
}

// Targets reads source (pk, id) and yields each row copy name maps it
// to, with what the row holds: 1 point read of the source, then 2 per
// target (1 where it holds no copy). A missing source is an error
// matching store.ErrNotFound.
func (v *View[S]) Targets(ctx context.Context, name, pk, id string) iter.Seq2[Held[S], error] {
	return func(yield func(Held[S], error) bool) {
		if err := v.copy(name); err != nil {
			yield(Held[S]{}, err)
			return
		}
		src, err := v.m.Get(ctx, pk, id)
		if err != nil {
			yield(Held[S]{}, err)
			return
		}
		ts, err := v.m.TargetsOf(name, src)
		if err != nil {
			yield(Held[S]{}, err)
			return
		}
		for _, t := range ts {
			h := Held[S]{Target: t}
			c, err := v.m.CopyAt(ctx, name, t)
			switch {
			case store.EntityNotFound(err):
			case err != nil:
				yield(h, err)
				return
			default:
				h.Copy = c
				h.Current = c.Entity != nil && c.PartitionKey == pk && c.ID == id && !c.Behind
			}
			if !yield(h, nil) {
				return
			}
		}
	}
}

// Refresh sends source (pk, id)'s values again to every target it maps
// to, under its version (model.RefreshCopies): a target made after the
// source's last write gets the copy; a target holding it already is
// left as it is. It removes nothing (model.Repair removes copies a
// source no longer maps to).
func (v *View[S]) Refresh(ctx context.Context, pk, id string) error {
	return v.m.RefreshCopies(ctx, pk, id)
}

// refuse builds a refusal of the view's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "denorm: "+format, args...)
	e.Source = store.SourceClient
	return e
}
