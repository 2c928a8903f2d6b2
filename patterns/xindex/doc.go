// Package xindex keeps secondary indexes of a mapped type in other
// partitions or tables: the design guide's inter-partition secondary
// index pattern. An employee is stored once, in partition "Sales" under
// its id; a copy keyed by email lives in partition "email_Sales" (or in a
// table of its own), so a lookup by email is one point read, and the
// index's load falls on partitions other than the entities'.
//
//	eng, _ := eventual.New(st, "staff-index", nil)
//	staff, err := xindex.New[Employee](eng, "Employees", nil,
//		xindex.Unique[Employee]("email", func(e *Employee) string { return e.Email }),
//		xindex.NonUnique[Employee]("lastname", func(e *Employee) string { return e.LastName }).
//			Project("FirstName", "LastName").InTable("EmployeeIndex"))
//	err = staff.Insert(ctx, &e)                    // entity + intent, one transaction
//	go eng.Work(ctx)                               // workers write the copies
//	hit, err := staff.Find(ctx, "Sales", "email", "ann@x")      // one point read
//	fresh, err := staff.FindFresh(ctx, "Sales", "email", "ann@x") // and the entity
//
// No transaction spans two partitions, so the copies are maintained
// through the eventual engine (core/eventual): the entity write and
// an outbox row holding the copy steps commit in one entity group
// transaction of the entity's partition, and workers carry the steps out,
// at least once each. Every copy carries the version of the entity it was
// made from and the entity's keys; a step writes a copy only over an
// older one of the same entity, so a late or repeated step never puts an
// older copy over a newer one, a changed value removes the old copy and
// writes the new one, and a delete removes every copy.
//
// A unique value cannot be refused atomically across partitions. Inside
// the entity's transaction, before it commits, the writer claims each new
// unique value with a claim row at the copy's key (an insert, which the
// service refuses when the key exists, or a write over the ETag read): a
// value another entity holds is refused at once with a
// *partition.DuplicateError, nothing written; a write of the partition
// meanwhile makes the transaction start over and claim again. A claim
// whose write failed is released; one left by a crashed writer expires
// after Options.ClaimLease (Reap removes it). A duplicate that still
// slips through (a claim that expired under a slow writer, lost to an
// entity of another partition sharing the index partition) is detected
// by the worker in the copy's partition: the first holder keeps the copy, and the other entity's
// operation fails with a *HeldTwiceError (ErrHeldTwice: a conflict of the
// data, not a race), retried and then listed in the engine's poison queue
// until one of the two entities gives up the value.
//
// Lookups read copies only: Find returns the copy and the version it was
// made from; FindFresh and Check read the entity by the copy's reference
// and say whether the copy was behind it (Stale), or report a copy whose
// entity no longer holds the value (a *DanglingError). docs/patterns/
// xindex.md has the costs and every failure case.
package xindex
