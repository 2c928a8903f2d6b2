// Package series is the design guide's data series pattern: a whole series
// of values (24 hourly counters, 365 daily values) kept in one entity, one
// property per slot, so that a chart needs one request and an update is
// one merge.
//
// Writers that update the same series contend on one entity; a Series
// updates it with a merge conditional on the ETag it read, and on a
// conflict reads again and retries, a bounded number of times with
// jittered backoff, so no increment is lost. When the next value would
// pass the service's limits (252 properties, 1 MiB by the service's size
// formula) the series spills into further entities of the same partition,
// written in the same entity group transaction as the first one, which
// fences every write; a read assembles the slots in order.
//
//	s, err := series.New(st.Table("Messages"), "emp000123", "20261122", series.Layout{Slots: 24}, nil)
//	n, err := s.Add(ctx, 14, 1)         // one more message in the 14:00 hour
//	snap, err := s.Read(ctx)            // all 24 counters, one request
//	counts, err := snap.Int64s()
package series
