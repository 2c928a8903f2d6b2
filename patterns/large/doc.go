// Package large is the design guide's large entities pattern: values
// past the service's limits (64 KiB in one property, 1 MiB in a whole
// entity) go to blobs, and the entity holds a reference to each.
//
// A struct says which fields may be large with the tag option large:
//
//	type Doc struct {
//		Folder string     `table:",pk"`
//		ID     string     `table:",rk"`
//		ETag   store.ETag `table:",etag"`
//		Title  string
//		Body   string `table:",large"` // may be megabytes
//		Scan   []byte `table:",large"`
//	}
//
//	docs, err := large.New[Doc](st, "Docs", "docs", &large.Options{Compress: true})
//	err = docs.Create(ctx)                                 // table and container
//	err = docs.Put(ctx, &d)                                // blobs first, then the entity
//	d, err := docs.Get(ctx, "inbox", "d1")                 // entity, then its blobs in parallel
//	d, err := docs.GetFields(ctx, "inbox", "d1", "Title")  // no blob read at all
//	rep, err := docs.Sweep(ctx, large.SweepOptions{})
//
// A large value stays in the entity while it is small (Options.Threshold,
// 32 KiB by default) and the entity stays within Options.EntityBudget
// (256 KiB); otherwise it goes to a blob of its own, compressed with
// gzip when Options.Compress is set, and the property holds a Ref: the
// blob's name, the encoding, the value's length and CRC-32C.
//
// A write puts its blobs first, each under a fresh random name with
// If-None-Match *, so two writers never share a blob; then it writes the
// entity, conditional on the version it read; only after that commits
// does it remove the blobs of the version it replaced. A crash or a lost
// answer therefore leaves at worst a blob no entity references (an
// orphan), never an entity whose reference points at nothing or at
// another writer's data. A write whose answer was lost is decided by
// reading the entity back: it references the new blobs, or it does not
// and the new blobs are removed; a blob the stored entity may reference
// is never removed. Sweep removes the orphans older than a grace period;
// each blob's name holds its entity's keys, so the sweep reads one entity
// per group of blobs rather than scanning the table.
//
// A read fetches only the blobs of the properties asked for, in
// parallel, and checks each against its reference. A blob removed by a
// writer that replaced the entity after it was read makes the read start
// over; a blob missing for good is a *BlobError matching ErrMissingBlob,
// naming the entity, the property and the blob.
//
// docs/patterns/large.md has the costs and the failure cases.
package large
