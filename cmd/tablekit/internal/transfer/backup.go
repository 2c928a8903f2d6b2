package transfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tablekit/tablekit/cmd/tablekit/internal/atomicfile"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tablekit/tablekit/store"
)

// ManifestName is the manifest's file name in a backup folder; a backup
// without one is incomplete.
const ManifestName = "manifest.json"

// Manifest describes one backup run.
type Manifest struct {
	Format   string          `json:"format"`
	Started  time.Time       `json:"started"`
	Finished time.Time       `json:"finished"`
	Note     string          `json:"note"`
	Tables   []TableManifest `json:"tables"`
}

// TableManifest is one table of a backup.
type TableManifest struct {
	Name       string         `json:"name"`
	File       string         `json:"file"`
	Rows       int            `json:"rows"`
	SHA256     string         `json:"sha256"`
	Started    time.Time      `json:"started"`
	Finished   time.Time      `json:"finished"`
	Partitions []PartitionSum `json:"partitions"`
}

// BackupNote is what a backup of a table in use holds.
const BackupNote = "not a point-in-time image: each table was read page by page from started to finished; a row written during the read may or may not be in it"

// Sink is where a backup's files go: a folder or a blob container.
type Sink interface {
	// Has reports whether the named file exists.
	Has(ctx context.Context, name string) (bool, error)
	// Write writes the named file whole; it exists only once complete.
	Write(ctx context.Context, name string, write func(io.Writer) error) error
	// Read returns the named file.
	Read(ctx context.Context, name string) ([]byte, error)
}

// Folder is a backup in a folder.
type Folder string

// Has implements Sink.
func (f Folder) Has(_ context.Context, name string) (bool, error) {
	_, err := os.Stat(filepath.Join(string(f), name))
	if os.IsNotExist(err) {
		return false, nil
	}
	return err == nil, err
}

// Write implements Sink: a temporary file, fsynced and renamed.
func (f Folder) Write(_ context.Context, name string, write func(io.Writer) error) error {
	if err := os.MkdirAll(string(f), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(string(f), name), write)
}

// Read implements Sink.
func (f Folder) Read(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(string(f), name))
}

// Blobs is a backup in a blob container, its files named Prefix+name.
// Each file is held in memory and put as one blob (a blob exists only
// once its put is complete).
type Blobs struct {
	Container store.Container
	Prefix    string
}

// Has implements Sink.
func (b Blobs) Has(ctx context.Context, name string) (bool, error) {
	_, _, err := b.Container.Get(ctx, b.Prefix+name)
	switch {
	case err == nil:
		return true, nil
	case store.Status(err) == 404:
		return false, nil
	}
	return false, err
}

// Write implements Sink.
func (b Blobs) Write(ctx context.Context, name string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	_, err := b.Container.Put(ctx, b.Prefix+name, buf.Bytes(), &store.BlobPutOptions{IfNoneMatchAny: true})
	return err
}

// Read implements Sink.
func (b Blobs) Read(ctx context.Context, name string) ([]byte, error) {
	data, _, err := b.Container.Get(ctx, b.Prefix+name)
	return data, err
}

// Backup writes each table into <table>.jsonl of the sink and the
// manifest last.
func Backup(ctx context.Context, st store.Store, tables []string, sink Sink, progress func(table string, rows int)) (Manifest, error) {
	m := Manifest{Format: "tablekit-backup/1", Started: time.Now().UTC(), Note: BackupNote}
	if has, err := sink.Has(ctx, ManifestName); err != nil || has {
		if err == nil {
			err = errors.New("it already holds a backup")
		}
		return m, err
	}
	for _, name := range tables {
		tm := TableManifest{Name: name, File: name + ".jsonl", Started: time.Now().UTC()}
		h := sha256.New()
		err := sink.Write(ctx, tm.File, func(w io.Writer) error {
			res, err := Export(ctx, st.Table(name), store.Query{}, "jsonl", false, io.MultiWriter(w, h), func(n int) {
				if progress != nil {
					progress(name, n)
				}
			})
			tm.Rows, tm.Partitions = res.Rows, res.Partitions
			return err
		})
		if err != nil {
			return m, fmt.Errorf("table %s: %w", name, err)
		}
		tm.SHA256 = hex.EncodeToString(h.Sum(nil))
		tm.Finished = time.Now().UTC()
		if tm.Partitions == nil {
			tm.Partitions = []PartitionSum{}
		}
		m.Tables = append(m.Tables, tm)
	}
	m.Finished = time.Now().UTC()
	err := sink.Write(ctx, ManifestName, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
	return m, err
}

// ReadManifest reads a backup's manifest and checks every file's SHA-256;
// it returns the files' contents by name.
func ReadManifest(ctx context.Context, sink Sink) (Manifest, map[string][]byte, error) {
	var m Manifest
	b, err := sink.Read(ctx, ManifestName)
	if err != nil {
		return m, nil, fmt.Errorf("not a complete backup: no %s: %w", ManifestName, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	files := map[string][]byte{}
	for _, t := range m.Tables {
		data, err := sink.Read(ctx, t.File)
		if err != nil {
			return m, nil, fmt.Errorf("%s: %w", t.File, err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != t.SHA256 {
			return m, nil, fmt.Errorf("%s: checksum %s, the manifest says %s: the file changed or is damaged", t.File, got, t.SHA256)
		}
		files[t.File] = data
	}
	return m, files, nil
}
