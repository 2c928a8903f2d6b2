// Package atomicfile writes a file so that a crash never leaves it half
// written: through a temporary file in the same folder, fsynced, renamed
// into place, and the folder fsynced.
package atomicfile

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// TempPattern is the glob of the temporary files Write makes for path: a
// killed writer leaves one behind, which a later open may remove.
func TempPattern(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
}

// Write writes path with write, through a buffered temporary file that
// replaces path only once write returned nil and the data is on disk.
func Write(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename this removes nothing
	w := bufio.NewWriterSize(tmp, 1<<16)
	if err := write(w); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
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
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
