package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteIsAllOrNothing: a write that succeeds replaces the file; one
// that fails halfway leaves the old file whole and no temporary file.
func TestWriteIsAllOrNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.jsonl")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "old\n"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		io.WriteString(w, "half of the new")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failed write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Fatalf("after a failed write the file holds %q, want the old content", b)
	}
	if left, _ := filepath.Glob(TempPattern(path)); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
