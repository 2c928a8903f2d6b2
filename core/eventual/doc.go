// Package eventual runs eventually consistent transactions: the design
// guide's answer for keeping data consistent across partitions, tables
// and blob containers, which no entity group transaction can span.
//
// A write and its consequences are split in two. The write to the source
// partition and an outbox row recording the operation it implies commit
// together, in one entity group transaction (core/partition), so a
// crash at any instant either loses both or keeps both. Then a message
// on a queue, put by the engine after Write returned (Flush waits for
// it), carries the operation to a worker, which runs its steps
// (upsert, delete, blob put, blob delete) elsewhere, at least once each,
// and removes the outbox row and the message only after every step
// succeeded. A sweeper queues again the operations whose message never
// came (a crash between the commit and the queueing, an expired or lost
// message).
//
//	eng, _ := eventual.New(st, "moves", &eventual.Options{Container: "moves"})
//	_, err := eng.Write(ctx, "Current", "Sales", func(tx *eventual.Tx) error {
//		if err := tx.Delete("employee", "000123", etag); err != nil {
//			return err
//		}
//		return tx.Then(ctx, "000123", eventual.Upsert("Archive", archived))
//	})
//	go eng.Work(ctx)                  // any number of workers
//	n, err := eng.Sweep(ctx, "Current") // periodically
//
// Every row the engine writes carries the version of its source
// (VersionProperty): a source row, the partition version of its last
// write; a copy, the version of the source it was made from. A step
// applies only over an older version, so a step that runs late, twice, or
// after a later operation never overwrites newer data with older data;
// a copy at the operation's own version (an earlier run of it) is kept,
// and a missing copy is created only while its source row exists.
//
// Failures: a step that fails transiently is retried with backoff within
// the receive; a failed receive records its error in the message and
// comes back later; a message received more than MaxReceives times goes
// to the poison queue with the error of every attempt (Poisoned lists
// them, Redrive sends them back). An operation larger than a message, or
// an outbox row, is stored in a blob under a fresh random name, removed
// once the operation completed; a missing blob is reported in the poison
// queue, never fatal to the worker. docs/core/eventual.md has the
// costs and every failure case.
//
// Packages built on the engine add kinds of step of their own with
// Engine.Handle and Custom: the entity model (package model) does.
package eventual
