package denorm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// stepData is what a target step carries besides the target's keys and
// the copied values.
type stepData struct {
	Rel    string `json:"r"`
	Action string `json:"a"` // "set" or "clear"
	PK     string `json:"pk"`
	RK     string `json:"rk"`
}

const (
	actSet   = "set"
	actClear = "clear"
)

const maxRounds = 8

var errContended = errors.New("denorm: the target kept changing under the step")

// values returns the target properties relation r copies from source
// entity e (a property e lacks is left out: the target loses it).
func (r *Rel[S]) values(e *store.Entity) map[string]any {
	out := make(map[string]any, len(r.fields))
	for _, f := range r.fields {
		if v, ok := e.Properties[f.from]; ok {
			out[f.to] = v
		}
	}
	return out
}

// merged returns target row cur with relation r's properties replaced by
// values (removed when values is nil) and the source and version
// recorded. Every other property of cur is kept.
func (r *Rel[S]) merged(cur store.Entity, src Ref, v int64, values map[string]any) store.Entity {
	out := store.Entity{PartitionKey: cur.PartitionKey, RowKey: cur.RowKey, Properties: make(map[string]any, len(cur.Properties)+len(r.fields)+2)}
	for k, pv := range cur.Properties {
		out.Properties[k] = pv
	}
	for _, f := range r.fields {
		delete(out.Properties, f.to)
		if pv, ok := values[f.to]; ok {
			out.Properties[f.to] = pv
		}
	}
	out.Properties[SourceProperty(r.name)] = sourceKey(src)
	out.Properties[VersionProperty(r.name)] = v
	return out
}

// step builds the engine step for one target.
func (d *Source[S]) step(r *Rel[S], act string, t Target, src Ref, values map[string]any) eventual.Step {
	data, _ := json.Marshal(stepData{Rel: r.name, Action: act, PK: src.PartitionKey, RK: src.RowKey})
	return eventual.Custom(d.kind, t.Table, store.Entity{PartitionKey: t.PartitionKey, RowKey: t.RowKey, Properties: values}, data)
}

// readStep reads a step back.
func (d *Source[S]) readStep(st eventual.Step) (*Rel[S], stepData, error) {
	var sd stepData
	if err := json.Unmarshal(st.Data, &sd); err != nil {
		return nil, sd, refuse("unreadable target step: %v", err)
	}
	r, err := d.rel(sd.Rel)
	if err != nil {
		return nil, sd, err
	}
	if sd.Action != actSet && sd.Action != actClear {
		return nil, sd, refuse("target step of relation %s: unknown action %q", sd.Rel, sd.Action)
	}
	if sd.RK == "" {
		return nil, sd, refuse("target step of relation %s names no source", sd.Rel)
	}
	for k := range st.Entity.Properties {
		known := false
		for _, f := range r.fields {
			known = known || f.to == k
		}
		if !known {
			return nil, sd, refuse("target step of relation %s carries property %q, which the relation does not copy", sd.Rel, k)
		}
	}
	return r, sd, nil
}

func (d *Source[S]) checkStep(st eventual.Step) error {
	_, _, err := d.readStep(st)
	return err
}

// runStep applies one target step under its guards.
func (d *Source[S]) runStep(ctx context.Context, op eventual.Operation, st eventual.Step) error {
	r, sd, err := d.readStep(st)
	if err != nil {
		return err
	}
	t := Target{Table: st.Table, PartitionKey: st.Entity.PartitionKey, RowKey: st.Entity.RowKey}
	src := Ref{PartitionKey: sd.PK, RowKey: sd.RK}
	var values map[string]any
	if sd.Action == actSet {
		values = st.Entity.Properties
		if values == nil {
			values = map[string]any{}
		}
	}
	return d.apply(ctx, r, t, src, op.Version, values)
}

func retryable(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || store.EntityNotFound(err) || errors.Is(err, store.ErrUnknownOutcome)
}

// apply sets (values non-nil) or clears relation r's properties on target
// t for source src at version v: over the target's own copy of src if it
// is older, over no copy, or over the copy of a source that no longer
// maps to it. A clear leaves the source and version on the target, so an
// older set arriving later is refused. A missing target is left alone.
func (d *Source[S]) apply(ctx context.Context, r *Rel[S], t Target, src Ref, v int64, values map[string]any) error {
	tbl := d.st.Table(t.Table)
	for range maxRounds {
		cur, err := tbl.Get(ctx, t.PartitionKey, t.RowKey, nil)
		if store.EntityNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		owner, has := sourceOf(&cur, r.name)
		takeOver := false
		switch {
		case has && owner == src:
			if versionOf(&cur, r.name) >= v {
				return nil
			}
		case !has:
		default:
			if values == nil {
				return nil // another source's copy: not this clear's to remove
			}
			if moved, err := d.movedOn(ctx, src, v); err != nil || moved {
				return err
			}
			if holds, err := d.stillMaps(ctx, r, owner, t); err != nil {
				return err
			} else if holds {
				return otherSource(r.name, t, owner, src)
			}
			takeOver = true
		}
		want := r.merged(cur, src, v, values)
		etag, err := tbl.Update(ctx, want, store.Replace, cur.ETag)
		if retryable(err) {
			continue
		}
		if err != nil || !takeOver {
			return err
		}
		return d.postcheck(ctx, r, tbl, want, etag, src, v, t)
	}
	return errContended
}

// postcheck runs after a take-over: the source may have stopped mapping
// to the target between the check and the write, and its clear may have
// run before and left the other source's copy alone. Then the copy goes.
func (d *Source[S]) postcheck(ctx context.Context, r *Rel[S], tbl store.Table, written store.Entity, etag store.ETag, src Ref, v int64, t Target) error {
	e, found, err := d.source(ctx, src)
	if err != nil {
		return err
	}
	ver := v
	if found {
		if eventual.VersionOf(&e) <= v {
			return nil
		}
		var s S
		if err := mapper.Decode(e, &s); err != nil {
			return err
		}
		if d.mapsTo(r, &s, t) {
			return nil // its later operation refreshes the copy
		}
		ver = eventual.VersionOf(&e)
	}
	_, err = tbl.Update(ctx, r.merged(written, src, ver, nil), store.Replace, etag)
	if err == nil || store.EntityNotFound(err) || errors.Is(err, store.ErrPreconditionFailed) {
		return nil
	}
	return err
}

// ref names source r's row for the engine.
func (d *Source[S]) ref(r Ref) eventual.Ref {
	return eventual.Ref{Table: d.name, PartitionKey: r.PartitionKey, RowKey: r.RowKey}
}

// source reads a source row as stored.
func (d *Source[S]) source(ctx context.Context, r Ref) (store.Entity, bool, error) {
	e, found, err := d.ref(r).Read(ctx, d.st)
	if err != nil {
		return store.Entity{}, false, fmt.Errorf("denorm: read source %s: %w", r, err)
	}
	return e, found, nil
}

// movedOn reports whether source src is gone or past version v.
func (d *Source[S]) movedOn(ctx context.Context, src Ref, v int64) (bool, error) {
	moved, err := eventual.MovedPast(ctx, d.st, d.ref(src), v)
	if err != nil {
		return false, fmt.Errorf("denorm: read source %s: %w", src, err)
	}
	return moved, nil
}

// stillMaps reports whether source r maps to target t now.
func (d *Source[S]) stillMaps(ctx context.Context, rel *Rel[S], r Ref, t Target) (bool, error) {
	e, found, err := d.source(ctx, r)
	if err != nil || !found {
		return false, err
	}
	var s S
	if err := mapper.Decode(e, &s); err != nil {
		return false, err
	}
	return d.mapsTo(rel, &s, t), nil
}
