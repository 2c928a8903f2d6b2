package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

// WriteFileAtomic writes a file through a temporary file in the same
// folder, fsynced and renamed into place.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Backup writes each table into dir/<table>.jsonl and the manifest last.
func Backup(ctx context.Context, st store.Store, tables []string, dir string, progress func(table string, rows int)) (Manifest, error) {
	m := Manifest{Format: "tablekit-backup/1", Started: time.Now().UTC(), Note: BackupNote}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return m, err
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		return m, fmt.Errorf("%s already holds a backup", dir)
	}
	for _, name := range tables {
		tm := TableManifest{Name: name, File: name + ".jsonl", Started: time.Now().UTC()}
		h := sha256.New()
		err := WriteFileAtomic(filepath.Join(dir, tm.File), func(w io.Writer) error {
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
	err := WriteFileAtomic(filepath.Join(dir, ManifestName), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
	return m, err
}

// ReadManifest reads a backup's manifest and checks every file's SHA-256.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return m, fmt.Errorf("%s is not a complete backup: %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", ManifestName, err)
	}
	for _, t := range m.Tables {
		f, err := os.Open(filepath.Join(dir, t.File))
		if err != nil {
			return m, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return m, err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != t.SHA256 {
			return m, fmt.Errorf("%s: checksum %s, the manifest says %s: the file changed or is damaged", t.File, got, t.SHA256)
		}
	}
	return m, nil
}
