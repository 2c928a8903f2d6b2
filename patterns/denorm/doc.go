// Package denorm keeps denormalized copies of related data current: the
// design guide's denormalization pattern. A department row holds its
// manager's name and phone, so one point read answers "who runs Sales
// and how do I call them", and every write of the manager carries the
// new values to the departments the manager runs.
//
//	mgrs, err := denorm.New[Employee](eng, "Staff",
//		denorm.Copy[Employee]("manager", func(e *Employee) []denorm.Target {
//			return []denorm.Target{{Table: "Departments", PartitionKey: "dept", RowKey: e.Manages}}
//		}).Field("Name", "ManagerName").Field("Phone", "ManagerPhone"))
//	err = mgrs.Update(ctx, &e) // the employee, and its departments' copies
//
// A relation declares which properties of a source type are copied into
// which target rows: a function from the source to the target keys, and
// the source properties with the target property each goes to. Target
// rows are the caller's (they hold data of their own): an update replaces
// only the denormalized properties, read and written back with the row's
// ETag, so the target's other properties are never clobbered; a target
// that does not exist is skipped, never created.
//
// Targets in the source's own partition are updated in the same entity
// group transaction as the source (core/eventual's fenced
// transaction, each target conditional on its ETag): atomic. Targets
// elsewhere (another partition or table) are updated through the eventual
// engine: the intent commits with the source, and workers apply it, at
// least once, guarded by the source version each target records per
// relation (VersionProperty) and by the source it came from
// (SourceProperty), so a late or repeated update never puts older values
// over newer ones. A target the source no longer maps to has the
// properties removed.
//
// A target holds one source's data per relation. Two sources that map to
// one target at once are a conflict of the data, never retried by the
// caller: refused at once (an *OtherSourceError, ErrOtherSource)
// for a target in the source's partition, and for a target elsewhere
// reported by the worker (the step fails, is retried, and ends in the
// engine's poison queue) until one of them stops mapping to it.
// docs/patterns/denorm.md has the costs and every failure case.
package denorm
