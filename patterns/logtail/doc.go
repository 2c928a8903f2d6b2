// Package logtail is the design guide's log tail pattern: a partition of
// events whose RowKeys sort newest first, so that "the n most recent" is
// one query with $top=n.
//
// Table storage returns entities in key order and has no "last n" query.
// A Stream stores each event under the .NET "inverted ticks" key
// (DateTime.MaxValue.Ticks - t.Ticks, 19 digits, from keys.InvertedTicks)
// followed by a unique suffix, so the newest event is always the first row
// of the partition and two events of the same 100 ns tick never collide.
// Rows written by .NET code with the bare 19-digit key, or with a suffix
// of their own, read back through the same Stream.
//
//	s, err := logtail.New[Claim](st.Table("Expenses"), "emp000123", nil)
//	ev, err := s.Append(ctx, Claim{Amount: 42.5})
//	last10, err := s.Latest(ctx, 10)               // one query, newest first
//	for ev, err := range s.Since(ctx, yesterday) { ... }
//	page, err := s.Page(ctx, token, 50)            // one screen, back in time
//
// Azure Cosmos DB's Table API does not return entities in key order; see
// docs/patterns/logtail.md for what to do there.
package logtail
