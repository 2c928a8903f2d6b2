// Package partition makes one partition of a table a unit of consistency:
// the primitives every pattern package of tablekit builds on.
//
// Azure Table storage gives one atomic tool, the entity group transaction
// (up to 100 writes to one partition, all or nothing), and one
// concurrency check, the ETag of a single row. Writers that keep several
// rows consistent (an entity and its index copies, a list and its items)
// need more: a way to refuse a write based on a stale view of the whole
// partition, a read of many rows that is known to be one state, a record
// of the intent to propagate a change elsewhere, written atomically with
// the change, and an exact answer when the service's answer to a commit is
// lost. This package gives them:
//
//   - a fence row per partition (RowKey ""), written with If-Match in every
//     transaction that changes the partition: a [Txn] based on version v
//     commits only if no other writer committed after v, so writers of
//     several rows never interleave ([ConflictError] otherwise);
//   - a tail row (RowKey "\uFFFD") that sorts after every data row and
//     carries the same version as the fence, so [Partition.Read] can tell
//     that the pages of a scan saw one state, and reads again when a
//     writer raced it;
//   - errors typed by the failing action: [ConflictError] for the fence (a
//     concurrent writer), [DuplicateError] for an insert that met an
//     existing row (a taken unique value), [ChangedError] for a
//     conditional write whose row changed or went away, [RowError] for any
//     other refusal; each wraps the service's *store.Error;
//   - outbox rows written in the same transaction as the business rows
//     ([Txn.Outbox]), and an [Outbox] that finds, claims and removes them;
//   - exact resolution of lost answers: the fence records the ids of the
//     last writers, so after a commit whose outcome is unknown one read of
//     the fence tells whether it applied; when it has not, the package
//     moves the fence past it, so it never can ([NotAppliedError]);
//   - head rows at any RowKey ([NewHead]): the fence generalised to a row
//     of the caller's choosing (a wide value's header), with the same
//     [Txn], commit, budget and lost-answer resolution; heads at different
//     RowKeys of one partition commit independently;
//   - one commit loop ([Head.Run], [Partition.Run]): read the head, build
//     the transaction, commit, and decide: retry a lost race or a commit
//     proved not applied, return a lost answer the head proved applied,
//     recognise a send reported failed that landed after all, and return
//     an unknown outcome unresolved rather than send it again; its
//     attempts, pauses and clock come from [Options];
//   - a transaction budget: the fence and the tail take 2 of the 100
//     actions and their bytes of the 4 MiB body; [Txn.Free] says what is
//     left, and a write that does not fit is refused before anything is
//     sent, naming the limit (errors.Is mapper.ErrBatchFull).
//
// # Reserved rows
//
// A fenced partition holds several kinds of rows. The package reserves the
// RowKey "" (the fence) and every RowKey starting with U+FFFD, U+FFFE or
// U+FFFF (the tail at "\uFFFD", outbox rows under [OutboxPrefix]); data
// rows are every other key, the range [DataRange]: ge " " and lt "\uFFFD".
// A [Txn] refuses a data write to a reserved key, and [DataCond] is the
// filter condition a query of your own must include so that it never
// decodes a reserved row as data.
//
// Every writer of a fenced partition must write through a [Txn]: a write
// that bypasses the fence is invisible to the other writers' checks and to
// the readers' consistency check.
//
// docs/core/partition.md describes the design, its costs and its
// failure cases.
package partition
