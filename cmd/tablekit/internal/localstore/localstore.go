// Package localstore keeps a memstore in a folder between commands: Open
// loads the folder's snapshot, Save writes it back atomically (a temporary
// file in the same folder, fsync, rename, fsync of the folder), so a crash
// leaves either the old snapshot or the new one, never half of one.
//
// The snapshot is JSON lines: a {"table":"Name"} line opens each table and
// the entity lines that follow are its rows, typed with "@odata.type"
// annotations, with their Timestamp. Entities are reloaded in Timestamp
// order on a clock that replays each one's Timestamp, so a reloaded entity
// keeps its Timestamp and its ETag (memstore derives the ETag from the
// write time): an ETag read by one command is still valid in the next.
package localstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/atomicfile"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/entityio"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

// FileName is the snapshot's name inside the folder, LockName its lock's.
const (
	FileName = "tablekit.snapshot.jsonl"
	LockName = "tablekit.lock"
)

// clock replays stored timestamps while loading, then tells real time.
type clock struct {
	mu  sync.Mutex
	at  time.Time
	set bool
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set {
		return c.at
	}
	return time.Now()
}

func (c *clock) replay(t time.Time, on bool) {
	c.mu.Lock()
	c.at, c.set = t, on
	c.mu.Unlock()
}

type tableLine struct {
	Table string `json:"table"`
}

type loaded struct {
	table string
	e     store.Entity
}

// Open returns a memstore holding the folder's snapshot (an empty store
// when there is none yet; the folder is created). Take the folder's Lock
// first: Open removes the temporary files of saves that were killed.
func Open(dir string) (*memstore.Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// a save killed before its rename leaves its temporary file: the
	// snapshot it was to replace is whole, the temporary file is not
	if olds, _ := filepath.Glob(atomicfile.TempPattern(filepath.Join(dir, FileName))); len(olds) > 0 {
		for _, o := range olds {
			os.Remove(o)
		}
	}
	c := &clock{}
	st := memstore.New(memstore.WithClock(c.now))
	f, err := os.Open(filepath.Join(dir, FileName))
	if os.IsNotExist(err) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ctx := context.Background()
	var rows []loaded
	table := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if bytes.HasPrefix(b, []byte(`{"table":`)) {
			var tl tableLine
			if err := json.Unmarshal(b, &tl); err != nil {
				return nil, fmt.Errorf("%s line %d: %v", FileName, line, err)
			}
			table = tl.Table
			if err := st.CreateTable(ctx, table); err != nil {
				return nil, fmt.Errorf("%s line %d: %v", FileName, line, err)
			}
			continue
		}
		e, err := entityio.DecodeJSON(b)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %v", FileName, line, err)
		}
		if table == "" {
			return nil, fmt.Errorf("%s line %d: an entity before any table line", FileName, line)
		}
		rows = append(rows, loaded{table, e})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	slices.SortStableFunc(rows, func(a, b loaded) int { return a.e.Timestamp.Compare(b.e.Timestamp) })
	for _, r := range rows {
		c.replay(r.e.Timestamp, !r.e.Timestamp.IsZero())
		e := r.e
		e.Timestamp, e.ETag = time.Time{}, ""
		if _, err := st.Table(r.table).Insert(ctx, e); err != nil {
			return nil, fmt.Errorf("%s: reloading %s/%s/%s: %v", FileName, r.table, e.PartitionKey, e.RowKey, err)
		}
	}
	c.replay(time.Time{}, false)
	return st, nil
}

// Save writes every table of st into the folder's snapshot, atomically.
func Save(ctx context.Context, dir string, st store.Store) error {
	var names []string
	opts := store.ListTablesOptions{}
	for {
		p, err := st.ListTables(ctx, opts)
		if err != nil {
			return err
		}
		for _, t := range p.Tables {
			names = append(names, t.Name)
		}
		if p.Continuation == "" {
			break
		}
		opts.Continuation = p.Continuation
	}
	return atomicfile.Write(filepath.Join(dir, FileName), func(w io.Writer) error {
		var buf []byte
		for _, name := range names {
			tl, _ := json.Marshal(tableLine{name})
			buf = append(append(buf[:0], tl...), '\n')
			if _, err := w.Write(buf); err != nil {
				return err
			}
			for e, err := range store.All(ctx, st.Table(name), store.Query{}) {
				if err != nil {
					return err
				}
				e.ETag = ""
				if buf, err = entityio.AppendJSON(buf[:0], &e, true); err != nil {
					return err
				}
				buf = append(buf, '\n')
				if _, err := w.Write(buf); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
