package wide

import (
	"fmt"

	"github.com/tablekit/tablekit/encryption"
)

// checkEncrypted refuses to cut a value the table encrypts into pieces:
// the table encrypts the property by its name, and the pieces, named
// pieceName(name, k), would be stored in plain text
// (encryption.CheckCopy).
func (w *Wide[T]) checkEncrypted(cs []cell) error {
	if encryption.CodecOf(w.table) == nil {
		return nil
	}
	for _, c := range cs {
		if name, _, ok := parsePiece(c.name); ok {
			if err := encryption.CheckCopy(w.table, w.table, name, c.name); err != nil {
				return fmt.Errorf("wide: property %q is over one property's limit, and a value the table encrypts cannot be cut into pieces: %w", truncate(name), err)
			}
		}
	}
	return nil
}
