// Package denorm reads denormalized copies kept by the entity model: the
// design guide's denormalization pattern. A department row holds its
// manager's name and phone, so one point read answers "who runs Sales and
// how do I call them", and every write of the manager carries the new
// values to the departments the manager runs.
//
// The copies are the model's: declare them on the source's model with
// model.CopyTo (one target) or model.CopyToEach (several, in several
// tables), renaming properties with Rename, and write the source through
// the model, which carries the copies in the write's one plan, checks
// them (Check) and mends them (Repair):
//
//	staff, err := model.Define(st, "Staff", &model.Options{Engine: eng},
//		model.CopyToEach("manager", []string{"Departments"}, departmentsOf, "Name", "Phone").
//			Rename("Name", "ManagerName").Rename("Phone", "ManagerPhone"))
//	mgrs, err := denorm.New(staff, nil)
//	c, err := mgrs.SourceOf(ctx, "manager", "Departments", "dept", "Sales") // who the copy comes from
//
// The view has no write of its own: write through the model (Insert,
// Update, Upsert, Delete, Move). It adds the pattern's reads: the source
// of a target row (SourceOf), the targets of a source with what each
// holds (Targets), and Refresh, which sends a source's values again to
// its targets (a target made after the source's last write).
// docs/patterns/denorm.md has the rows, the costs and the failure cases.
package denorm
