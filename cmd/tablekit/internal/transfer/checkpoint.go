// Package transfer moves entities in bulk: import from a file through the
// bulk writer (resumable from a checkpoint), export, copy between tables in
// parallel partition ranges (resumable), verify and diff two tables, and
// backup and restore.
package transfer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Checkpoint is an append-only record of the units of work (input chunks
// and partitions, or partition ranges) that are done. Its first line
// names the work it belongs to; a checkpoint of other work is refused.
// Every Mark is fsynced before it returns; a line torn by a crash is
// ignored on reopening, its unit done again.
type Checkpoint struct {
	mu   sync.Mutex
	f    *os.File
	done map[string]bool
}

type cpLine struct {
	Unit string `json:"u"`
}

// ErrOtherWork is returned when a checkpoint belongs to other work.
var ErrOtherWork = errors.New("the checkpoint file belongs to other work")

// OpenCheckpoint opens (or creates) the checkpoint at path for the work
// the header describes.
func OpenCheckpoint(path string, header any) (*Checkpoint, error) {
	head, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{done: map[string]bool{}}
	data, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err) || (err == nil && len(data) == 0):
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(append(head, '\n')); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, err
		}
		c.f = f
		return c, nil
	case err != nil:
		return nil, err
	}
	first, rest, _ := bytes.Cut(data, []byte{'\n'})
	if !bytes.Equal(bytes.TrimSpace(first), head) {
		return nil, fmt.Errorf("%w: %s was written for %s, not for %s; remove it to start over", ErrOtherWork, path, first, head)
	}
	good := len(first) + 1
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break // torn last line: its unit is not done
		}
		var l cpLine
		if json.Unmarshal(rest[:i], &l) == nil && l.Unit != "" {
			c.done[l.Unit] = true
		}
		good += i + 1
		rest = rest[i+1:]
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(good)); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(int64(good), 0); err != nil {
		f.Close()
		return nil, err
	}
	c.f = f
	return c, nil
}

// Done reports whether unit is done. A nil checkpoint has nothing done.
func (c *Checkpoint) Done(unit string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done[unit]
}

// Count returns how many units are done.
func (c *Checkpoint) Count() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.done)
}

// Mark records units as done, durably.
func (c *Checkpoint) Mark(units ...string) error {
	if c == nil || len(units) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := bufio.NewWriter(c.f)
	for _, u := range units {
		b, _ := json.Marshal(cpLine{u})
		w.Write(b)
		w.WriteByte('\n')
		c.done[u] = true
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return c.f.Sync()
}

// Close closes the file.
func (c *Checkpoint) Close() error {
	if c == nil {
		return nil
	}
	return c.f.Close()
}

// committer batches finished units: Commit runs the durability barrier
// (flush: the local store's snapshot) and then marks them, so a unit is
// never recorded done before its rows are durable.
type committer struct {
	mu      sync.Mutex
	pending []string
	cp      *Checkpoint
	flush   func() error
}

func (m *committer) add(unit string) {
	m.mu.Lock()
	m.pending = append(m.pending, unit)
	m.mu.Unlock()
}

func (m *committer) commit() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) == 0 {
		return nil
	}
	if m.flush != nil {
		if err := m.flush(); err != nil {
			return err
		}
	}
	if err := m.cp.Mark(m.pending...); err != nil {
		return err
	}
	m.pending = m.pending[:0]
	return nil
}
