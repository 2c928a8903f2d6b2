package store

// bulkBatch is one planned transaction: its number and the input
// positions of its actions, in input order.
type bulkBatch struct {
	id  int
	idx []int
	// after counts the earlier batches of the partition this one must wait
	// for (they write one of its RowKeys, or PartitionOrder chains them);
	// then lists the batches waiting for this one.
	after int32
	then  []*bulkBatch
}

// follow makes b wait for prev, once.
func (b *bulkBatch) follow(prev *bulkBatch) {
	if prev == nil || prev == b {
		return
	}
	for _, x := range prev.then {
		if x == b {
			return
		}
	}
	prev.then = append(prev.then, b)
	b.after++
}

// planBulk groups the valid actions into transactions. The result has one
// entry per partition, in the order partitions first appear in actions,
// each holding that partition's transactions in the order they must run.
//
// A partition's actions are packed greedily in input order; a new
// transaction starts when the current one holds MaxBatchActions actions,
// when the next action would bring its estimated body to MaxBatchBytes
// (the limit is strict: ValidateTransaction refuses a body of exactly
// MaxBatchBytes), or when the next action's RowKey is already in it.
// Splitting only where needed keeps the order of writes to the same entity
// and uses as few transactions as the greedy order allows.
//
// A batch that writes a RowKey an earlier batch of its partition writes
// too waits for that batch (after, then), so writes to one entity land in
// input order; batches with disjoint keys may run at once. With ordered,
// every batch waits for the one before it in its partition.
func planBulk(actions []Action, valid []bool, sizes []int, ordered bool) [][]*bulkBatch {
	type open struct {
		batch *bulkBatch
		size  int
		rows  map[string]struct{}
		last  map[string]*bulkBatch // the latest batch writing each RowKey
	}
	var parts [][]*bulkBatch
	partOf := make(map[string]int)
	var cur []open
	for i := range actions {
		if !valid[i] {
			continue
		}
		a := &actions[i]
		p, ok := partOf[a.Entity.PartitionKey]
		if !ok {
			p = len(parts)
			partOf[a.Entity.PartitionKey] = p
			parts = append(parts, nil)
			cur = append(cur, open{})
		}
		size := sizes[i]
		c := &cur[p]
		_, dup := c.rows[a.Entity.RowKey]
		if c.batch == nil || dup || len(c.batch.idx) == MaxBatchActions || c.size+size >= MaxBatchBytes {
			prev := c.batch
			c.batch = &bulkBatch{}
			c.size = 0
			if c.rows == nil {
				c.rows = make(map[string]struct{})
				c.last = make(map[string]*bulkBatch)
			}
			clear(c.rows)
			parts[p] = append(parts[p], c.batch)
			if ordered {
				c.batch.follow(prev)
			}
		}
		c.batch.idx = append(c.batch.idx, i)
		c.size += size
		c.rows[a.Entity.RowKey] = struct{}{}
		c.batch.follow(c.last[a.Entity.RowKey])
		c.last[a.Entity.RowKey] = c.batch
	}
	id := 0
	for _, batches := range parts {
		for _, b := range batches {
			b.id = id
			id++
		}
	}
	return parts
}
