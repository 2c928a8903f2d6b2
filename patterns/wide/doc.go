// Package wide is the design guide's wide entities pattern: a logical
// value that passes what one entity holds (more than 252 properties, a
// string over 32,767 UTF-16 units or a binary value over 64 KiB, more than
// 1 MiB in all) stored across rows of one partition, written in one entity
// group transaction and read back as one typed value.
//
//	docs, err := wide.New[Doc](st, "Docs", nil)
//	etag, err := docs.Put(ctx, "acme", "doc_17", &d, "")   // create
//	d, etag, err := docs.Get(ctx, "acme", "doc_17")        // one range query
//	etag, err = docs.Put(ctx, "acme", "doc_17", &d, etag)  // replace if unchanged
//	err = docs.Delete(ctx, "acme", "doc_17", etag)
//
// # Layout
//
// Value id of partition pk takes the rows keys.Join(id, "00") (the header)
// to keys.Join(id, "99"), so any string may be an id, the rows sort
// together, and one range query reads them without touching the other
// rows of the partition (other values, other kinds). The properties are
// placed in rows in name order: a row takes the next property while it
// stays within 252 properties, 1 MiB by the service's size formula and 1
// MiB of JSON body (which Azurite checks on a replace), and a string or
// binary value over its property limit is first cut into
// pieces of at most the limit, named TkWide0_Name, TkWide1_Name and so
// on. A value that fits one entity takes one row. Every row carries the
// version of the write that wrote it (TkWideVersion); the header also
// carries the number of rows (TkWideRows, which makes headers
// recognisable among other rows: see IDs) and the two properties of the
// value's head row (TkWideHeadVersion, TkWideHeadWriters): the header is
// a partition.Head at its RowKey. Like every property name tablekit
// stores, they start with store.ReservedPrefix ("Tk"), which a value's
// property names may not.
//
// # Writes
//
// A write reads the header (one point read) and sends one entity group
// transaction: the header, conditional on the ETag read (an insert for a
// new value), every other row, and deletes of the rows a longer version
// had. The transaction must fit the service's limits of 100 actions and a
// 4 MiB request, counted as the store counts them (store.ActionWireSize:
// base64 and escapes included); a value that does not is refused before
// anything is sent (TooLargeError). Two writers of one value cannot both
// commit on top of the same version: the header's If-Match refuses the
// second (ConditionError). The transaction is a partition.Txn on the
// value's head, so a write whose answer is lost is resolved as every
// lost commit of the patterns is: one read of the header tells whether
// the write applied; if it did not, the head is moved past it so it never
// can, and the write tries again as a new one; it is never sent again. An
// UnknownError (its Resolve asks again) remains only when that cannot be
// told.
//
// # Reads
//
// A read is one query of the value's rows. When they come in several
// pages a write may land in between; every row carries its version, so a
// read that saw rows of two versions notices and reads again. No read
// returns a value assembled from two versions.
//
// Every writer of a value must write through the package: a row written
// by other means is invisible to the header's fence.
//
// docs/patterns/wide.md describes the costs and the failure cases.
package wide
