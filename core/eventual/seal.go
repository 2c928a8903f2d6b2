package eventual

import (
	"context"
	"fmt"

	"github.com/tablekit/tablekit/encryption"
	"github.com/tablekit/tablekit/store"
)

// seal returns ent, the entity of a step that writes to table, as an
// operation carries it. When the engine's store encrypts table
// (encryption.CodecOf), the properties it encrypts are encrypted for
// their row of that table, as the table stores them: the outbox row, the
// message or the blob that holds the operation never holds their
// plaintext, and the worker decrypts them (open) before the step runs
// and writes them through the encrypting table, which encrypts them again
// under a fresh content key. A property that the source's table encrypts
// and table would store in plain text is refused
// (encryption.CheckCopy), before anything is written.
func (e *Engine) seal(ctx context.Context, src *Ref, table string, ent store.Entity) (store.Entity, bool, error) {
	if len(ent.Properties) == 0 {
		return ent, false, nil
	}
	var dst store.Table
	if table != "" {
		dst = e.st.Table(table)
	}
	if src != nil {
		from := e.st.Table(src.Table)
		if encryption.CodecOf(from) != nil {
			for name, v := range ent.Properties {
				if v == nil {
					continue
				}
				if err := encryption.CheckCopy(from, dst, name, name); err != nil {
					return ent, false, err
				}
			}
		}
	}
	c := encryption.CodecOf(dst)
	if c == nil {
		return ent, false, nil
	}
	need := false
	for name, v := range ent.Properties {
		if v != nil && c.Encrypts(name) {
			need = true
			break
		}
	}
	if !need {
		return ent, false, nil
	}
	sealed, err := c.Encrypt(ctx, table, ent)
	if err != nil {
		return ent, false, err
	}
	return sealed, true, nil
}

// open decrypts the entity of a sealed step that writes to table. A
// worker whose store does not encrypt table cannot: the error is not
// permanent, so the message waits for a worker that can (and reaches
// the poison queue after MaxReceives receives if none does).
func (e *Engine) open(ctx context.Context, table string, ent store.Entity) (store.Entity, error) {
	c := encryption.CodecOf(e.st.Table(table))
	if c == nil {
		return ent, fmt.Errorf("eventual: the step's entity is encrypted for table %s, and this engine's store does not encrypt that table: "+
			"build the worker's engine on the encrypting store (encryption's Codec.Store naming the table)", table)
	}
	return c.Decrypt(ctx, table, ent)
}
