package store

// wireSizer is a table that changes the entities it writes before the
// service sees them (an encrypting table, whose values grow on the way)
// and estimates an action's share of a transaction body as it sends it.
type wireSizer interface {
	ActionWireSize(a *Action) int
}

// ActionWireSizeIn is ActionWireSize of a as table t sends it: a table
// that changes the entities it writes (client-side encryption) estimates
// it with a method ActionWireSize(*Action) int of its own; any other
// table sends a as it is. The bulk writer and the mapper's Batch plan
// their transactions with it.
func ActionWireSizeIn(t Table, a *Action) int {
	if s, ok := t.(wireSizer); ok {
		return s.ActionWireSize(a)
	}
	return ActionWireSize(a)
}
