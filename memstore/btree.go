package memstore

import "github.com/tablekit/tablekit/store"

// An ordered index of records by (PartitionKey, RowKey) in the service's
// ordinal order: a B-tree, so that a point read, an insert and a delete are
// O(log n) and a range scan visits only the keys it returns.

const (
	btreeDegree   = 32
	btreeMaxItems = 2*btreeDegree - 1
	btreeMinItems = btreeDegree - 1
)

type bnode struct {
	items    []ref
	children []*bnode // nil in a leaf
}

// btree orders refs by their records' keys, read from the arena a.
type btree struct {
	root *bnode
	size int
	a    *arena
}

func compareKey(pk, rk string, r record) int {
	if c := store.CompareOrdinal(pk, r.pk()); c != 0 {
		return c
	}
	return store.CompareOrdinal(rk, r.rk())
}

// find returns the index of the first item >= (pk, rk) and whether it is equal.
func (n *bnode) find(a *arena, pk, rk string) (int, bool) {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKey(pk, rk, a.get(n.items[m])) > 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.items) && compareKey(pk, rk, a.get(n.items[lo])) == 0
}

func (t *btree) get(pk, rk string) ref {
	n := t.root
	for n != nil {
		i, ok := n.find(t.a, pk, rk)
		if ok {
			return n.items[i]
		}
		if n.children == nil {
			return 0
		}
		n = n.children[i]
	}
	return 0
}

// put inserts r or replaces the ref with its key, returning the old one (0
// when the key is new).
func (t *btree) put(r ref) ref {
	if t.root == nil {
		t.root = &bnode{items: make([]ref, 0, 4)}
	}
	if len(t.root.items) >= btreeMaxItems {
		old := t.root
		t.root = &bnode{children: []*bnode{old}}
		t.root.splitChild(0)
	}
	rec := t.a.get(r)
	prev := t.root.insert(t.a, r, rec.pk(), rec.rk())
	if prev == 0 {
		t.size++
	}
	return prev
}

// splitChild splits the full child i around its median item.
func (n *bnode) splitChild(i int) {
	c := n.children[i]
	mid := btreeDegree - 1
	median := c.items[mid]
	right := &bnode{items: append(make([]ref, 0, btreeMaxItems), c.items[mid+1:]...)}
	c.items = c.items[:mid]
	if c.children != nil {
		right.children = append(make([]*bnode, 0, btreeMaxItems+1), c.children[mid+1:]...)
		clear(c.children[mid+1:])
		c.children = c.children[:mid+1]
	}
	n.items = append(n.items, 0)
	copy(n.items[i+1:], n.items[i:])
	n.items[i] = median
	n.children = append(n.children, nil)
	copy(n.children[i+2:], n.children[i+1:])
	n.children[i+1] = right
}

func (n *bnode) insert(a *arena, r ref, pk, rk string) ref {
	for {
		i, ok := n.find(a, pk, rk)
		if ok {
			prev := n.items[i]
			n.items[i] = r
			return prev
		}
		if n.children == nil {
			n.items = append(n.items, 0)
			copy(n.items[i+1:], n.items[i:])
			n.items[i] = r
			return 0
		}
		if len(n.children[i].items) >= btreeMaxItems {
			n.splitChild(i)
			switch c := compareKey(pk, rk, a.get(n.items[i])); {
			case c == 0:
				prev := n.items[i]
				n.items[i] = r
				return prev
			case c > 0:
				i++
			}
		}
		n = n.children[i]
	}
}

// remove deletes the ref with the key and returns it, or 0.
func (t *btree) remove(pk, rk string) ref {
	if t.root == nil {
		return 0
	}
	r := t.root.remove(t.a, pk, rk, false)
	if len(t.root.items) == 0 && t.root.children != nil {
		t.root = t.root.children[0]
	}
	if r != 0 {
		t.size--
	}
	return r
}

// remove deletes (pk, rk) from the subtree, or its maximum when max is set.
// Every child it descends into first gets more than the minimum of items,
// so a removal never leaves a node under-full.
func (n *bnode) remove(a *arena, pk, rk string, max bool) ref {
	for {
		var i int
		var found bool
		if max {
			i = len(n.items)
		} else {
			i, found = n.find(a, pk, rk)
		}
		if n.children == nil {
			if max {
				r := n.items[len(n.items)-1]
				n.items = n.items[:len(n.items)-1]
				return r
			}
			if !found {
				return 0
			}
			r := n.items[i]
			copy(n.items[i:], n.items[i+1:])
			n.items = n.items[:len(n.items)-1]
			return r
		}
		if len(n.children[i].items) <= btreeMinItems {
			n.grow(i)
			continue // the node changed shape: search it again
		}
		if found {
			r := n.items[i]
			n.items[i] = n.children[i].remove(a, "", "", true)
			return r
		}
		n = n.children[i]
	}
}

// grow gives child i more than the minimum of items by borrowing from a
// sibling or merging with one.
func (n *bnode) grow(i int) {
	c := n.children[i]
	switch {
	case i > 0 && len(n.children[i-1].items) > btreeMinItems:
		left := n.children[i-1]
		c.items = append(c.items, 0)
		copy(c.items[1:], c.items)
		c.items[0] = n.items[i-1]
		n.items[i-1] = left.items[len(left.items)-1]
		left.items = left.items[:len(left.items)-1]
		if left.children != nil {
			c.children = append(c.children, nil)
			copy(c.children[1:], c.children)
			c.children[0] = left.children[len(left.children)-1]
			left.children[len(left.children)-1] = nil
			left.children = left.children[:len(left.children)-1]
		}
	case i < len(n.items) && len(n.children[i+1].items) > btreeMinItems:
		right := n.children[i+1]
		c.items = append(c.items, n.items[i])
		n.items[i] = right.items[0]
		copy(right.items, right.items[1:])
		right.items = right.items[:len(right.items)-1]
		if right.children != nil {
			c.children = append(c.children, right.children[0])
			copy(right.children, right.children[1:])
			right.children[len(right.children)-1] = nil
			right.children = right.children[:len(right.children)-1]
		}
	default:
		if i >= len(n.items) {
			i--
		}
		left, right := n.children[i], n.children[i+1]
		left.items = append(left.items, n.items[i])
		left.items = append(left.items, right.items...)
		if left.children != nil {
			left.children = append(left.children, right.children...)
		}
		copy(n.items[i:], n.items[i+1:])
		n.items = n.items[:len(n.items)-1]
		copy(n.children[i+1:], n.children[i+2:])
		n.children[len(n.children)-1] = nil
		n.children = n.children[:len(n.children)-1]
	}
}

// ascend calls fn for every record >= (pk, rk) in order until fn returns false.
func (t *btree) ascend(pk, rk string, fn func(record) bool) {
	if t.root != nil {
		t.root.ascend(t.a, pk, rk, true, fn)
	}
}

// remap replaces every ref in key order (a compaction moves the records,
// not their order).
func (n *bnode) remap(moved func(ref) ref) {
	for i := range n.items {
		if n.children != nil {
			n.children[i].remap(moved)
		}
		n.items[i] = moved(n.items[i])
	}
	if n.children != nil {
		n.children[len(n.items)].remap(moved)
	}
}

// ascend walks the subtree; bounded says whether (pk, rk) still limits it.
func (n *bnode) ascend(a *arena, pk, rk string, bounded bool, fn func(record) bool) bool {
	i := 0
	if bounded {
		i, _ = n.find(a, pk, rk)
	}
	for ; i < len(n.items); i++ {
		if n.children != nil && !n.children[i].ascend(a, pk, rk, bounded, fn) {
			return false
		}
		bounded = false
		if !fn(a.get(n.items[i])) {
			return false
		}
	}
	if n.children != nil {
		return n.children[len(n.items)].ascend(a, pk, rk, bounded, fn)
	}
	return true
}
