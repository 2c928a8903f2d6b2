// Package indexentity is the design guide's index entities pattern: lists
// of keys kept per value of a non-unique property (every employee whose
// last name is Jones), so that a lookup by that value reads one list and
// then the entities it names, instead of scanning the table.
package indexentity
