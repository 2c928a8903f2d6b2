package denorm

import (
	"fmt"

	"github.com/tablekit/tablekit/encryption"
)

// checkEncrypted refuses a relation that would copy a property the
// source's table encrypts into target t as a property t's table stores in
// plain text (encryption.CheckCopy): the copy of an encrypted value stays
// encrypted, under the target property's name.
func (d *Source[S]) checkEncrypted(r *Rel[S], t Target) error {
	src := d.st.Table(d.name)
	if encryption.CodecOf(src) == nil {
		return nil
	}
	dst := d.st.Table(t.Table)
	for _, f := range r.fields {
		if err := encryption.CheckCopy(src, dst, f.from, f.to); err != nil {
			return fmt.Errorf("denorm: relation %s: target %s: %w", r.name, t, err)
		}
	}
	return nil
}
