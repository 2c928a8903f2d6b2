package memstore

import (
	"sync"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/filter"
)

// filterCacheSize bounds the parsed filters a store keeps; past it the
// cache starts over.
const filterCacheSize = 512

// parsedFilter is a $filter parsed, checked and planned once.
type parsedFilter struct {
	f    *filter.Filter
	plan filter.Plan
}

// filterCache keeps parsed filters by their text: a program asks the same
// few filters again and again (a log tail's latest n, a partition's
// range), and parsing and planning one cost a quarter of a small query.
// A parsed filter and its plan never change, so a hit is shared.
type filterCache struct {
	mu sync.RWMutex
	m  map[string]*parsedFilter
}

// parse checks q as filter.ParseQuery does and returns its filter and
// plan, from the cache when q's filter was parsed before. Only filters
// that parsed are kept; $top and $select are checked on every call.
func (c *filterCache) parse(q store.Query) (*filter.Filter, filter.Plan, error) {
	c.mu.RLock()
	p := c.m[q.Filter]
	c.mu.RUnlock()
	if p != nil {
		// The filter passed before; the rest of the request is checked by
		// the same code, on an empty filter.
		if _, err := filter.ParseQuery(store.Query{Top: q.Top, Select: q.Select}); err != nil {
			return nil, filter.Plan{}, err
		}
		return p.f, p.plan, nil
	}
	f, err := filter.ParseQuery(q)
	if err != nil {
		return nil, filter.Plan{}, err
	}
	p = &parsedFilter{f: f, plan: f.Plan()}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= filterCacheSize {
		c.m = make(map[string]*parsedFilter)
	}
	c.m[q.Filter] = p
	c.mu.Unlock()
	return p.f, p.plan, nil
}
