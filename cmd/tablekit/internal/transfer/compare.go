package transfer

import (
	"context"
	"iter"

	"github.com/tablekit/tablekit/store"
)

// Difference kinds.
const (
	OnlyInA = "only-in-source" // lost: in A, not in B
	OnlyInB = "only-in-target" // extra: in B, not in A
	Changed = "changed"        // in both with other values
)

// Diff is one key whose rows differ.
type Diff struct {
	Kind string        `json:"kind"`
	PK   string        `json:"pk"`
	RK   string        `json:"rk"`
	A    *store.Entity `json:"-"`
	B    *store.Entity `json:"-"`
}

// PartitionCompare is one partition's counts and checksums on both sides.
type PartitionCompare struct {
	PK      string `json:"pk"`
	RowsA   int    `json:"rows_source"`
	RowsB   int    `json:"rows_target"`
	SumA    string `json:"sha256_source"`
	SumB    string `json:"sha256_target"`
	Lost    int    `json:"lost"`
	Extra   int    `json:"extra"`
	Changed int    `json:"changed"`
}

// Same reports whether the partition is the same on both sides.
func (p PartitionCompare) Same() bool { return p.SumA == p.SumB && p.RowsA == p.RowsB }

// CompareResult sums a comparison.
type CompareResult struct {
	Partitions               []PartitionCompare
	RowsA, RowsB             int
	Lost, Extra, Changed     int
	PartitionsA, PartitionsB int
}

// Compare walks A and B in key order at once (both sides are read in
// (PartitionKey, RowKey) order, as the service returns them), calls fn for
// each differing key, and returns per-partition counts and checksums.
func Compare(ctx context.Context, a, b store.Table, q store.Query, fn func(Diff)) (CompareResult, error) {
	return CompareSeq(store.All(ctx, a, q), store.All(ctx, b, q), fn)
}

// CompareSeq is Compare over two sequences in key order.
func CompareSeq(sa, sb iter.Seq2[store.Entity, error], fn func(Diff)) (CompareResult, error) {
	na, stopA := iter.Pull2(sa)
	defer stopA()
	nb, stopB := iter.Pull2(sb)
	defer stopB()
	var res CompareResult
	var sumA, sumB summer
	byPK := map[string]*PartitionCompare{}
	var order []string
	part := func(pk string) *PartitionCompare {
		p, ok := byPK[pk]
		if !ok {
			p = &PartitionCompare{PK: pk}
			byPK[pk] = p
			order = append(order, pk)
		}
		return p
	}
	next := func(n func() (store.Entity, error, bool)) (*store.Entity, error) {
		e, err, ok := n()
		if !ok {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &e, nil
	}
	ea, err := next(na)
	if err != nil {
		return res, err
	}
	eb, err := next(nb)
	if err != nil {
		return res, err
	}
	for ea != nil || eb != nil {
		c := 0
		switch {
		case ea == nil:
			c = 1
		case eb == nil:
			c = -1
		default:
			c = store.CompareOrdinal(ea.PartitionKey, eb.PartitionKey)
			if c == 0 {
				c = store.CompareOrdinal(ea.RowKey, eb.RowKey)
			}
		}
		switch {
		case c < 0:
			p := part(ea.PartitionKey)
			p.RowsA++
			p.Lost++
			res.Lost++
			sumA.add(ea)
			if fn != nil {
				fn(Diff{Kind: OnlyInA, PK: ea.PartitionKey, RK: ea.RowKey, A: ea})
			}
		case c > 0:
			p := part(eb.PartitionKey)
			p.RowsB++
			p.Extra++
			res.Extra++
			sumB.add(eb)
			if fn != nil {
				fn(Diff{Kind: OnlyInB, PK: eb.PartitionKey, RK: eb.RowKey, B: eb})
			}
		default:
			p := part(ea.PartitionKey)
			p.RowsA++
			p.RowsB++
			sumA.add(ea)
			sumB.add(eb)
			if !SameProperties(ea.Properties, eb.Properties) {
				p.Changed++
				res.Changed++
				if fn != nil {
					fn(Diff{Kind: Changed, PK: ea.PartitionKey, RK: ea.RowKey, A: ea, B: eb})
				}
			}
		}
		if c <= 0 {
			res.RowsA++
			if ea, err = next(na); err != nil {
				return res, err
			}
		}
		if c >= 0 {
			res.RowsB++
			if eb, err = next(nb); err != nil {
				return res, err
			}
		}
	}
	sumA.close()
	sumB.close()
	for _, s := range sumA.parts {
		part(s.PK).SumA = s.Checksum
	}
	for _, s := range sumB.parts {
		part(s.PK).SumB = s.Checksum
	}
	for _, pk := range order {
		p := byPK[pk]
		if p.RowsA > 0 {
			res.PartitionsA++
		}
		if p.RowsB > 0 {
			res.PartitionsB++
		}
		res.Partitions = append(res.Partitions, *p)
	}
	return res, nil
}
