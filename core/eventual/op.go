package eventual

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

// VersionProperty is the property the engine keeps on every row it
// writes: on a source row, the version of the source partition its last
// write created; on a copy, the version of the source it was made from. A
// step applies only over an older version, so a step that runs late or
// twice never overwrites newer data with older data.
const VersionProperty = "TkVersion"

// StepKind is what one step of an operation does.
type StepKind string

// The kinds of step. Each is idempotent under the version guard: running
// it twice, or after a later operation, changes nothing.
const (
	// StepUpsert writes an entity (replacing it) unless the stored one
	// carries the same or a newer version.
	StepUpsert StepKind = "upsert"
	// StepDelete deletes an entity unless the stored one carries a newer
	// version; a missing entity is done.
	StepDelete StepKind = "delete"
	// StepPutBlob writes a blob (last writer wins: name blobs by version
	// when order matters).
	StepPutBlob StepKind = "putblob"
	// StepDeleteBlob deletes a blob; a missing blob is done.
	StepDeleteBlob StepKind = "deleteblob"
)

// Step is one idempotent write an operation makes elsewhere: in another
// partition, another table, or a blob container.
type Step struct {
	// Kind is the step's kind.
	Kind StepKind
	// Table is the table of an upsert or delete.
	Table string
	// Entity is the entity an upsert writes, or the keys a delete deletes.
	Entity store.Entity
	// Container and Blob name the blob of a blob step; Data is what a put
	// writes.
	Container, Blob string
	Data            []byte
}

// Upsert returns the step that writes e into table, replacing what is
// there unless it is as new or newer.
func Upsert(table string, e store.Entity) Step {
	return Step{Kind: StepUpsert, Table: table, Entity: e}
}

// Delete returns the step that deletes (pk, rk) from table unless the row
// there is newer than the operation.
func Delete(table, pk, rk string) Step {
	return Step{Kind: StepDelete, Table: table, Entity: store.Entity{PartitionKey: pk, RowKey: rk}}
}

// PutBlob returns the step that writes data to blob name of container.
func PutBlob(container, name string, data []byte) Step {
	return Step{Kind: StepPutBlob, Container: container, Blob: name, Data: data}
}

// DeleteBlob returns the step that deletes blob name of container.
func DeleteBlob(container, name string) Step {
	return Step{Kind: StepDeleteBlob, Container: container, Blob: name}
}

// Ref names a row: the source an operation comes from. It is
// store.RowRef, tablekit's one table-qualified reference.
type Ref = store.RowRef

// Operation is the work a source change implies elsewhere: its steps, run
// in order, each at least once, all eventually.
type Operation struct {
	// Source is the row the operation comes from, when there is one: an
	// upsert of a missing copy is skipped if the source is gone (or, for
	// an operation whose write deleted its source, written again past
	// Version), since a later operation carries its deletion or state.
	Source *Ref
	// Version is the source's version when the operation was made. An
	// Operation submitted without a source may leave it 0: its steps then
	// apply whatever version the rows carry.
	Version int64
	// SourceDeleted is set when the write that made the operation deleted
	// its source (moving a row elsewhere): the source's absence then does
	// not make the operation stale; a source written again later does.
	SourceDeleted bool
	// Steps are the writes, in order.
	Steps []Step
}

// wireOp is an Operation as JSON, its entities in the Table service's own
// wire format so every property keeps its EDM type.
type wireOp struct {
	Source        *Ref       `json:"source,omitempty"`
	Version       int64      `json:"version"`
	SourceDeleted bool       `json:"sourceDeleted,omitempty"`
	Steps         []wireStep `json:"steps"`
}

type wireStep struct {
	Kind      StepKind        `json:"kind"`
	Table     string          `json:"table,omitempty"`
	Entity    json.RawMessage `json:"entity,omitempty"`
	Container string          `json:"container,omitempty"`
	Blob      string          `json:"blob,omitempty"`
	Data      []byte          `json:"data,omitempty"`
	// Sealed: Entity is encrypted for Table, as the encrypting table of
	// the engine's store would store it (see seal).
	Sealed bool `json:"sealed,omitempty"`
}

// encodeOp checks op and encodes it.
func (e *Engine) encodeOp(ctx context.Context, op Operation) ([]byte, error) {
	if err := checkOp(op, e.handler); err != nil {
		return nil, err
	}
	w := wireOp{Source: op.Source, Version: op.Version, SourceDeleted: op.SourceDeleted, Steps: make([]wireStep, len(op.Steps))}
	for i, s := range op.Steps {
		ws := wireStep{Kind: s.Kind, Table: s.Table, Container: s.Container, Blob: s.Blob, Data: s.Data}
		if s.Kind == StepUpsert || s.Kind == StepDelete || hasEntity(s) {
			ent := s.Entity
			if s.Kind == StepDelete {
				ent.Properties = nil
			}
			var err error
			if ent, ws.Sealed, err = e.seal(ctx, op.Source, s.Table, ent); err != nil {
				return nil, stepErr(i, s, err)
			}
			b, err := wire.AppendEntity(nil, &ent)
			if err != nil {
				return nil, stepErr(i, s, err)
			}
			ws.Entity = b
		}
		w.Steps[i] = ws
	}
	return json.Marshal(w)
}

// decodeOp reads an encoded operation, decrypting the entities of its
// sealed steps.
func (e *Engine) decodeOp(ctx context.Context, b []byte) (Operation, error) {
	var w wireOp
	if err := json.Unmarshal(b, &w); err != nil {
		return Operation{}, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	op := Operation{Source: w.Source, Version: w.Version, SourceDeleted: w.SourceDeleted, Steps: make([]Step, len(w.Steps))}
	for i, ws := range w.Steps {
		s := Step{Kind: ws.Kind, Table: ws.Table, Container: ws.Container, Blob: ws.Blob, Data: ws.Data}
		if len(ws.Entity) > 0 {
			ent, err := wire.DecodeEntity(ws.Entity)
			if err != nil {
				return Operation{}, fmt.Errorf("%w: entity of step %d: %w", errUnreadable, i, err)
			}
			if ws.Sealed {
				if ent, err = e.open(ctx, ws.Table, ent); err != nil {
					return Operation{}, stepErr(i, s, err)
				}
			}
			s.Entity = ent
		}
		op.Steps[i] = s
	}
	return op, nil
}

// checkOp refuses an operation no worker could run, naming the step and
// the value: before anything is written. custom finds the handler of a
// kind of step registered with Engine.Handle (nil for none).
func checkOp(op Operation, custom func(StepKind) *StepHandler) error {
	if len(op.Steps) == 0 {
		return refuse("an operation needs at least one step")
	}
	if op.Version < 0 {
		return refuse("operation version %d is negative", op.Version)
	}
	if op.Source != nil {
		if err := store.ValidateTableName(op.Source.Table); err != nil {
			return fmt.Errorf("eventual: source: %w", err)
		}
		if err := store.ValidateKeys(op.Source.PartitionKey, op.Source.RowKey); err != nil {
			return fmt.Errorf("eventual: source: %w", err)
		}
	}
	for i, s := range op.Steps {
		var err error
		switch s.Kind {
		case StepUpsert:
			if err = store.ValidateTableName(s.Table); err == nil {
				if _, bad := s.Entity.Properties[VersionProperty]; bad {
					err = refuse("property %s is the engine's own: it records the version", VersionProperty)
				} else {
					err = store.ValidateEntity(&s.Entity)
				}
			}
		case StepDelete:
			if err = store.ValidateTableName(s.Table); err == nil {
				err = store.ValidateKeys(s.Entity.PartitionKey, s.Entity.RowKey)
			}
		case StepPutBlob, StepDeleteBlob:
			if err = store.ValidateContainerName(s.Container); err == nil {
				err = store.ValidateBlobName(s.Blob)
			}
		default:
			err = checkCustom(s, custom)
		}
		if err != nil {
			return stepErr(i, s, err)
		}
	}
	return nil
}

func stepErr(i int, s Step, err error) error {
	return fmt.Errorf("eventual: step %d (%s): %w", i, s.Kind, err)
}

// refuse builds a refusal of tablekit's own checks.
func refuse(format string, args ...any) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "eventual: "+format, args...)
	e.Source = store.SourceClient
	return e
}
