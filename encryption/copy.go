package encryption

import "github.com/tablekit/tablekit/store"

// CodecOf returns the Codec an encrypting table runs (a table of
// NewTable, Codec.Table or Codec.Store), or nil when t is any other
// table. Layers that carry an entity's properties somewhere before they
// write them to t use it: core/eventual encrypts the entities of its
// operations for the table each step writes, so that outbox rows, queue
// messages and blobs never hold the plaintext of an encrypted property.
// It looks beneath wrappers that name the table they wrap with a method
// Unwrap() store.Table, as store/intercept's do (the instrumentation of
// store/meter and store/tkotel).
func CodecOf(t store.Table) *Codec {
	for t != nil {
		switch e := t.(type) {
		case *table:
			return e.c
		case *typedTable:
			return e.c
		}
		u, ok := t.(interface{ Unwrap() store.Table })
		if !ok {
			return nil
		}
		t = u.Unwrap()
	}
	return nil
}

// Encrypts reports whether c encrypts property name. A nil Codec
// encrypts nothing.
func (c *Codec) Encrypts(name string) bool {
	return c != nil && c.encrypted(name)
}

// CheckCopy refuses a copy that would store an encrypted value in plain
// text: property from of table src, which src encrypts, written as
// property to of table dst, which does not encrypt it (dst nil: a table
// that encrypts nothing). The error matches store.ErrInvalidInput and
// names both properties and both tables. Patterns that copy properties
// between rows (indexes in other partitions, denormalised copies, moves)
// check every copied property with it before they write anything.
func CheckCopy(src, dst store.Table, from, to string) error {
	if src == nil || !CodecOf(src).Encrypts(from) {
		return nil
	}
	if dst != nil && CodecOf(dst).Encrypts(to) {
		return nil
	}
	where := "a place that is not a table"
	if dst != nil {
		where = "table " + dst.Name()
	}
	return invalid("property %q of table %s is encrypted, and its copy %q in %s would be stored in plain text: "+
		"wrap %s with an encryption that encrypts %q (Codec.Store with the table named, and the property in Config.Properties)",
		from, src.Name(), to, where, where, to)
}
