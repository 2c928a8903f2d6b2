package memstore

import "hash/maphash"

// index maps a record's key to its ref for point reads: open addressing
// with linear probing over a slice of (hash, ref) pairs. It holds no Go
// pointers, unlike a map[string]*record, so the garbage collector skips it.
type index struct {
	seed  maphash.Seed
	slots []slot
	count int // live entries
	used  int // live entries and tombstones
}

type slot struct {
	h uint64
	r ref // 0: empty; tombstone: a deleted entry
}

const tombstone ref = 1 // no record has chunk number 0

func newIndex() index { return index{seed: maphash.MakeSeed(), slots: make([]slot, 8)} }

// find returns the slot position of key, or -1.
func (x *index) find(a *arena, key string) int {
	h := maphash.String(x.seed, key)
	mask := len(x.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &x.slots[i]
		switch {
		case s.r == 0:
			return -1
		case s.r != tombstone && s.h == h && a.get(s.r).key() == key:
			return i
		}
	}
}

// get returns the ref of key, or 0.
func (x *index) get(a *arena, key string) ref {
	if i := x.find(a, key); i >= 0 {
		return x.slots[i].r
	}
	return 0
}

// set points key at r, returning the ref it replaced (or 0).
func (x *index) set(a *arena, key string, r ref) ref {
	if i := x.find(a, key); i >= 0 {
		old := x.slots[i].r
		x.slots[i].r = r
		return old
	}
	if (x.used+1)*4 > len(x.slots)*3 {
		x.rehash(a)
	}
	h := maphash.String(x.seed, key)
	mask := len(x.slots) - 1
	i := int(h) & mask
	for x.slots[i].r != 0 && x.slots[i].r != tombstone {
		i = (i + 1) & mask
	}
	if x.slots[i].r == 0 {
		x.used++
	}
	x.slots[i] = slot{h: h, r: r}
	x.count++
	return 0
}

// delete removes key, returning its ref (or 0).
func (x *index) delete(a *arena, key string) ref {
	i := x.find(a, key)
	if i < 0 {
		return 0
	}
	old := x.slots[i].r
	x.slots[i].r = tombstone
	x.count--
	return old
}

// rehash grows (or cleans) the table to twice the live entries.
func (x *index) rehash(a *arena) {
	n := 8
	for n*3 < (x.count+1)*2*4 {
		n *= 2
	}
	old := x.slots
	x.slots = make([]slot, n)
	x.used, x.count = 0, 0
	mask := n - 1
	for _, s := range old {
		if s.r == 0 || s.r == tombstone {
			continue
		}
		i := int(s.h) & mask
		for x.slots[i].r != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = s
		x.used++
		x.count++
	}
}
