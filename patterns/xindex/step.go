package xindex

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/core/partition"
	"github.com/tablekit/tablekit/internal/claims"
	"github.com/tablekit/tablekit/store"
)

// stepData is what a copy step carries besides the copy row: the index,
// whether it puts or deletes, and for a put the claim token of the write
// that made it (so that the copy clears that write's stamp, and keeps any
// other's).
type stepData struct {
	Index  string `json:"i"`
	Action string `json:"a"` // "put" or "del"
	Token  string `json:"t,omitempty"`
}

const (
	actPut = "put"
	actDel = "del"
)

// maxRounds bounds the read-and-retry rounds of a guarded write under
// contention.
const maxRounds = claims.MaxRounds

// It is a race (partition.ErrConflict): the worker runs the step again.
var errContended = fmt.Errorf("xindex: the row kept changing under every attempt: %w: %w", partition.ErrConflict,
	&store.Error{Code: store.CodeUpdateConditionNotSatisfied, Status: 412, Index: -1, Message: "another writer changed the row first", Source: store.SourceClient})

// exists is the package's refusal of a row another entity holds: Code
// EntityAlreadyExists (409), nothing sent.
func exists(format string, args ...any) *store.Error {
	e := store.Errorf(store.CodeEntityAlreadyExists, 409, format, args...)
	e.Source = store.SourceClient
	return e
}

// step builds the engine step for a copy; token is the claim token of the
// write that makes a put.
func (x *Table[T]) step(s *Spec[T], act string, row store.Entity, token string) eventual.Step {
	data, _ := json.Marshal(stepData{Index: s.name, Action: act, Token: token})
	return eventual.Custom(x.kind, s.table, row, data)
}

// readStep reads a step back.
func (x *Table[T]) readStep(st eventual.Step) (*Spec[T], stepData, error) {
	var d stepData
	if err := json.Unmarshal(st.Data, &d); err != nil {
		return nil, d, refuse("unreadable copy step: %v", err)
	}
	s, err := x.spec(d.Index)
	if err != nil {
		return nil, d, err
	}
	if d.Action != actPut && d.Action != actDel {
		return nil, d, refuse("copy step for index %s: unknown action %q", d.Index, d.Action)
	}
	if ownerOf(&st.Entity).RowKey == "" {
		return nil, d, refuse("copy step for index %s names no entity", d.Index)
	}
	if _, bad := st.Entity.Properties[eventual.VersionProperty]; bad {
		return nil, d, refuse("copy step for index %s carries %s: the worker sets it", d.Index, eventual.VersionProperty)
	}
	return s, d, nil
}

func (x *Table[T]) checkStep(st eventual.Step) error {
	_, _, err := x.readStep(st)
	return err
}

// runStep carries out one copy step under the guards of claims.Rules:
// a put writes the copy over nothing (if the entity has not moved on),
// over an older copy of the same entity, or over a copy or claim of an
// entity that no longer holds the value; a delete removes the entity's
// copy if it is not newer and the entity no longer holds the value.
func (x *Table[T]) runStep(ctx context.Context, op eventual.Operation, st eventual.Step) error {
	s, d, err := x.readStep(st)
	if err != nil {
		return err
	}
	p := place(s, st.Table, st.Entity.PartitionKey, st.Entity.RowKey)
	src := x.ref(ownerOf(&st.Entity))
	if d.Action == actDel {
		return x.rules.Del(ctx, p, src, op.Version)
	}
	return x.rules.Put(ctx, p, st.Entity, src, op.Version, d.Token)
}

// ref names entity r's row for the engine.
func (x *Table[T]) ref(r Ref) eventual.Ref {
	return eventual.Ref{Table: x.name, PartitionKey: r.PartitionKey, RowKey: r.RowKey}
}

// source reads an entity's row as stored, with its version.
func (x *Table[T]) source(ctx context.Context, r Ref) (store.Entity, bool, error) {
	e, found, err := x.ref(r).Read(ctx, x.st)
	if err != nil {
		return store.Entity{}, false, fmt.Errorf("xindex: read entity %s: %w", r, err)
	}
	return e, found, nil
}
