// Package xindex is the design guide's inter-partition secondary index
// pattern as a view on an entity model (package model): an employee is
// stored once, in partition "Sales" under its id; the model's global
// indexes (model.GlobalUnique, model.GlobalIndex) keep a copy of it under
// its email and its last name in another table or in partitions of their
// own, one per value, written by the eventual engine after the entity's
// transaction; the view reads those copies as the pattern does: a point
// read for a unique value, a range read for the others, and ordered reads
// over a range or a prefix of values.
//
//	staff, err := model.Define(st, "Employees", &model.Options{Engine: eng},
//		model.GlobalUnique("email", func(e *Employee) string { return e.Email }).In("EmployeeEmails"),
//		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
//	x, err := xindex.New(staff, nil)
//	err = staff.Insert(ctx, &e)                             // the model writes
//	hit, err := x.Find(ctx, "email", "ann@x")               // the copy, as it stands
//	fresh, err := x.FindFresh(ctx, "email", "ann@x")        // and the entity, Stale if behind
//	for h, err := range x.Prefix(ctx, "lastname", "Jo") {}  // ordered, across partitions
//
// The view has no write path and no stored format of its own: every
// write goes through the model (Insert, Update, Delete, Move), which
// claims unique values before the entity's transaction, writes the copies
// from the same plan under the entity's version, and checks and repairs
// them (model.Check, model.Repair); model.ReapClaims removes the claims
// writes abandoned. The model's global indexes are keyed by value alone:
// a unique value is unique across every partition, and the lookups take
// no partition key.
//
// A Hit is what the copy holds, the entity it names and the entity's
// version it was made from; it may be behind its entity until the engine
// runs (FindFresh and Check read the entity and set Stale), and a write
// is found as soon as it returns, through the claim it made.
// docs/patterns/xindex.md has the costs and the failure cases.
package xindex
