// Package periods is the design guide's high-volume delete pattern: the
// entities that expire together live in a table of their own, one table per
// day or month, and old data goes away by deleting whole tables, one
// request per period instead of a scan and a delete per entity.
//
// Tables names and routes the periods (keys.TableName: "Logins20261122"),
// creates a period's table on first use and ahead of time (Prepare), waits
// out the service's TableBeingDeleted answer when a name is reused soon
// after a delete, and deletes the tables past the retention horizon
// (Retain, with a dry run). Retain records the horizon in the store before
// it deletes, and no table of a period it expired is ever created again,
// by any process (see RecordedHorizon). Repo is the typed view: writes routed by time,
// and one iterator over the periods of a time range, in order.
//
//	p, err := periods.New(st, "Logins", keys.Day, &periods.Options{Retention: 60 * 24 * time.Hour})
//	logins, err := periods.NewRepo[Login](p)
//	err = logins.Insert(ctx, at, &login)                 // into Logins20261122
//	for l, err := range logins.Query(ctx, from, to) { ... }
//	report, err := p.Retain(ctx, periods.RetainOptions{}) // deletes the days that ended 60 days ago
package periods
