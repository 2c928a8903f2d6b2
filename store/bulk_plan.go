package store

// bulkBatch is one planned transaction: its number and the input
// positions of its actions, in input order.
type bulkBatch struct {
	id  int
	idx []int
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
func planBulk(actions []Action, valid []bool) [][]*bulkBatch {
	type open struct {
		batch *bulkBatch
		size  int
		rows  map[string]struct{}
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
		size := ActionWireSize(a)
		c := &cur[p]
		_, dup := c.rows[a.Entity.RowKey]
		if c.batch == nil || dup || len(c.batch.idx) == MaxBatchActions || c.size+size >= MaxBatchBytes {
			c.batch = &bulkBatch{}
			c.size = 0
			if c.rows == nil {
				c.rows = make(map[string]struct{})
			}
			clear(c.rows)
			parts[p] = append(parts[p], c.batch)
		}
		c.batch.idx = append(c.batch.idx, i)
		c.size += size
		c.rows[a.Entity.RowKey] = struct{}{}
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
