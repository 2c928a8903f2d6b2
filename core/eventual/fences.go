package eventual

import (
	"sync"

	"github.com/tablekit/tablekit/core/partition"
)

// fenceCacheSize bounds the fences an Engine remembers; past it the cache
// starts over (a forgotten fence costs one read at the next write).
const fenceCacheSize = 4096

// fences remembers the fence each partition had after this engine's last
// commit to it, so that the next write there begins from it instead of
// reading it: one round trip less. A fence another writer has moved since
// makes the commit fail on the fence (ConflictError) with nothing
// applied; the write then reads the fence and tries again. So a stale
// entry costs a round trip and never a wrong write: the commit is
// conditional on the fence's ETag whatever the fence was taken from.
type fences struct {
	mu sync.Mutex
	m  map[string]partition.Fence
}

func fenceKey(table, pk string) string { return table + "\x00" + pk }

func (c *fences) get(table, pk string) (partition.Fence, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.m[fenceKey(table, pk)]
	return f, ok
}

func (c *fences) put(table, pk string, f partition.Fence) {
	if !f.Exists() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= fenceCacheSize {
		c.m = make(map[string]partition.Fence)
	}
	c.m[fenceKey(table, pk)] = f
}

func (c *fences) forget(table, pk string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, fenceKey(table, pk))
}
