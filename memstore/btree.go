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
	items    []*record
	children []*bnode // nil in a leaf
}

type btree struct {
	root *bnode
	size int
}

func compareKey(pk, rk string, r *record) int {
	if c := store.CompareOrdinal(pk, r.pk()); c != 0 {
		return c
	}
	return store.CompareOrdinal(rk, r.rk())
}

// find returns the index of the first item >= (pk, rk) and whether it is equal.
func (n *bnode) find(pk, rk string) (int, bool) {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareKey(pk, rk, n.items[m]) > 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.items) && compareKey(pk, rk, n.items[lo]) == 0
}

func (t *btree) get(pk, rk string) *record {
	n := t.root
	for n != nil {
		i, ok := n.find(pk, rk)
		if ok {
			return n.items[i]
		}
		if n.children == nil {
			return nil
		}
		n = n.children[i]
	}
	return nil
}

// put inserts r or replaces the record with its key, returning the old one.
func (t *btree) put(r *record) *record {
	if t.root == nil {
		t.root = &bnode{items: make([]*record, 0, 4)}
	}
	if len(t.root.items) >= btreeMaxItems {
		old := t.root
		t.root = &bnode{children: []*bnode{old}}
		t.root.splitChild(0)
	}
	prev := t.root.insert(r)
	if prev == nil {
		t.size++
	}
	return prev
}

// splitChild splits the full child i around its median item.
func (n *bnode) splitChild(i int) {
	c := n.children[i]
	mid := btreeDegree - 1
	median := c.items[mid]
	right := &bnode{items: append(make([]*record, 0, btreeMaxItems), c.items[mid+1:]...)}
	clear(c.items[mid:])
	c.items = c.items[:mid]
	if c.children != nil {
		right.children = append(make([]*bnode, 0, btreeMaxItems+1), c.children[mid+1:]...)
		clear(c.children[mid+1:])
		c.children = c.children[:mid+1]
	}
	n.items = append(n.items, nil)
	copy(n.items[i+1:], n.items[i:])
	n.items[i] = median
	n.children = append(n.children, nil)
	copy(n.children[i+2:], n.children[i+1:])
	n.children[i+1] = right
}

func (n *bnode) insert(r *record) *record {
	for {
		i, ok := n.find(r.pk(), r.rk())
		if ok {
			prev := n.items[i]
			n.items[i] = r
			return prev
		}
		if n.children == nil {
			n.items = append(n.items, nil)
			copy(n.items[i+1:], n.items[i:])
			n.items[i] = r
			return nil
		}
		if len(n.children[i].items) >= btreeMaxItems {
			n.splitChild(i)
			switch c := compareKey(r.pk(), r.rk(), n.items[i]); {
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

// remove deletes the record with the key and returns it, or nil.
func (t *btree) remove(pk, rk string) *record {
	if t.root == nil {
		return nil
	}
	r := t.root.remove(pk, rk, false)
	if len(t.root.items) == 0 && t.root.children != nil {
		t.root = t.root.children[0]
	}
	if r != nil {
		t.size--
	}
	return r
}

// remove deletes (pk, rk) from the subtree, or its maximum when max is set.
// Every child it descends into first gets more than the minimum of items,
// so a removal never leaves a node under-full.
func (n *bnode) remove(pk, rk string, max bool) *record {
	for {
		var i int
		var found bool
		if max {
			i = len(n.items)
		} else {
			i, found = n.find(pk, rk)
		}
		if n.children == nil {
			if max {
				r := n.items[len(n.items)-1]
				n.items[len(n.items)-1] = nil
				n.items = n.items[:len(n.items)-1]
				return r
			}
			if !found {
				return nil
			}
			r := n.items[i]
			copy(n.items[i:], n.items[i+1:])
			n.items[len(n.items)-1] = nil
			n.items = n.items[:len(n.items)-1]
			return r
		}
		if len(n.children[i].items) <= btreeMinItems {
			n.grow(i)
			continue // the node changed shape: search it again
		}
		if found {
			r := n.items[i]
			n.items[i] = n.children[i].remove("", "", true)
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
		c.items = append(c.items, nil)
		copy(c.items[1:], c.items)
		c.items[0] = n.items[i-1]
		n.items[i-1] = left.items[len(left.items)-1]
		left.items[len(left.items)-1] = nil
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
		right.items[len(right.items)-1] = nil
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
		n.items[len(n.items)-1] = nil
		n.items = n.items[:len(n.items)-1]
		copy(n.children[i+1:], n.children[i+2:])
		n.children[len(n.children)-1] = nil
		n.children = n.children[:len(n.children)-1]
	}
}

// ascend calls fn for every record >= (pk, rk) in order until fn returns false.
func (t *btree) ascend(pk, rk string, fn func(*record) bool) {
	if t.root != nil {
		t.root.ascend(pk, rk, true, fn)
	}
}

// ascend walks the subtree; bounded says whether (pk, rk) still limits it.
func (n *bnode) ascend(pk, rk string, bounded bool, fn func(*record) bool) bool {
	i := 0
	if bounded {
		i, _ = n.find(pk, rk)
	}
	for ; i < len(n.items); i++ {
		if n.children != nil && !n.children[i].ascend(pk, rk, bounded, fn) {
			return false
		}
		bounded = false
		if !fn(n.items[i]) {
			return false
		}
	}
	if n.children != nil {
		return n.children[len(n.items)].ascend(pk, rk, bounded, fn)
	}
	return true
}
