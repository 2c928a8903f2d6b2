package memstore

// ref locates a record in an arena: the chunk number plus one in the high
// 32 bits and the offset in the low 32 bits, so the zero ref is never a
// record.
type ref uint64

// arenaChunk is the size of an ordinary arena chunk. A record larger than
// a chunk gets a chunk of its own.
const arenaChunk = 4 << 20

// arena stores a table's records packed into large byte chunks. The chunks
// hold no Go pointers, so the garbage collector neither scans nor visits
// the records one by one, however many there are. Bytes are written once
// and never changed: a replaced or deleted record becomes garbage, counted
// so that the table can compact when garbage outweighs live data. Strings
// handed to callers may view chunk bytes; a compaction moves records to new
// chunks and leaves the old ones to the garbage collector, which keeps them
// while any such string is alive.
type arena struct {
	chunks  [][]byte
	live    int64 // bytes of stored records
	garbage int64 // bytes of replaced and deleted records
	// minGarbage is the garbage below which no compaction runs; zero
	// means arenaChunk. Tests lower it to compact often.
	minGarbage int64
}

// add copies r into the arena and returns its ref.
func (a *arena) add(r record) ref {
	n := len(r)
	last := len(a.chunks) - 1
	if last < 0 || cap(a.chunks[last])-len(a.chunks[last]) < n {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, n)))
		last++
	}
	c := a.chunks[last]
	off := len(c)
	a.chunks[last] = append(c, r...)
	a.live += int64(n)
	return ref(uint64(last+1)<<32 | uint64(off))
}

// get returns the record at x.
func (a *arena) get(x ref) record {
	c := a.chunks[int(x>>32)-1]
	off := int(uint32(x))
	b := c[off:]
	return record(b[:recordLen(b):recordLen(b)])
}

// free marks the record at x as garbage.
func (a *arena) free(x ref) {
	n := int64(recordLen(a.chunks[int(x>>32)-1][uint32(x):]))
	a.live -= n
	a.garbage += n
}

// wantsCompaction reports whether garbage outweighs live data by enough to
// be worth copying the live records into fresh chunks.
func (a *arena) wantsCompaction() bool {
	floor := a.minGarbage
	if floor == 0 {
		floor = arenaChunk
	}
	return a.garbage > floor && a.garbage > a.live
}
