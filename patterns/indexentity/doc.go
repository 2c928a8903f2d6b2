// Package indexentity is the design guide's index entities pattern: lists
// of keys kept per value of a non-unique property (every employee whose
// last name is Jones), so that a lookup by that value reads one list and
// then the entities it names, instead of scanning the table.
//
// A Table writes the entities of a mapped type and keeps their lists
// where Options.Placement says, the guide's three options:
//
//   - SamePartition: index entities in each entity's own partition,
//     changed in the same entity group transaction as the entity, on the
//     entity's head row (a partition.Head at "~" + its RowKey, through
//     the head's one commit loop, which resolves a lost answer); each
//     index entity is conditional on the ETag it was read with, and a
//     concurrent change of the same list is a race, retried after a
//     jittered pause. Always exact; a list covers one partition.
//   - SeparatePartition: index entities in a table of their own, one
//     partition per value, covering the whole table; the entity and the
//     intent to change its lists commit together (core/eventual), and
//     the engine's workers change the lists.
//   - InBlobs: one blob per value, covering the whole table, changed the
//     same way under the blob's ETag.
//
// In use:
//
//	staff, err := indexentity.New(st, "Employees", nil,
//		indexentity.List("lastname", func(e *Employee) string { return e.LastName }))
//	err = staff.Insert(ctx, &e) // the entity and its list, one transaction
//	err = staff.Update(ctx, &e) // a new last name moves its id between lists
//	for e, err := range staff.FindAll(ctx, "Sales", "lastname", "Jones") { ... }
//
// A list too long for one index entity (252 properties, 64 KiB a string,
// 1 MiB an entity, counted as the service counts them) spreads over
// several, each holding the ids whose hash falls in its range; the entity
// that holds an id is found with one query, and a write changes it alone
// (splitting it in one transaction when it fills). A blob holds a list of
// any length.
//
// The lists of InBlobs and SeparatePartition lag behind their entities
// until the engine has run. Each change there is an idempotent set
// operation guarded by versions: an entry records the version of the
// entity it was written from, the step that writes it reads the entity's
// current state first (so a late or repeated step brings the list to
// now, not to its own time), never overwrites a newer entry, and reads
// the entity again after an add to catch a write that raced it. FindAll
// checks every entity it reads against the list's value and skips those
// that are gone or hold another value, so a lagging list never yields a
// wrong entity. docs/patterns/indexentity.md has the costs and every
// failure case.
package indexentity
