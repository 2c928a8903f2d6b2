// Package series is the design guide's data series pattern: a whole series
// of values (24 hourly counters, 365 daily values) kept in one entity, one
// property per slot, so that a chart needs one request and an update is
// one write.
//
// The series' first entity is its head row (a partition.Head of package
// core/partition): every write is one entity group transaction on it,
// based on the state the write read, so writers that update the same
// series never interleave; on a conflict a write reads again and
// retries, a bounded number of times with jittered backoff, so no
// increment is lost. A write whose answer was lost is resolved by one
// read of the head, never sent again. When the next value would pass the
// service's limits (252 properties, 1 MiB by the service's size formula,
// or 1 MiB of JSON body, which a replace must keep to) the series spills into further entities of the same partition, written
// in the same transaction as the head; a read assembles the slots in
// order.
//
//	s, err := series.New(st.Table("Messages"), "emp000123", "20261122", series.Layout{Slots: 24}, nil)
//	n, err := s.Add(ctx, 14, 1)         // one more message in the 14:00 hour
//	snap, err := s.Read(ctx)            // all 24 counters, one request
//	counts, err := snap.Int64s()
package series
