package transfer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckpointSurvivesATornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ck")
	head := map[string]string{"kind": "test", "input": "abc"}
	c, err := OpenCheckpoint(p, head)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Mark("0:a", "0:b"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// a crash in the middle of a write leaves a torn last line
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte(`{"u":"0:c`))
	f.Close()
	c, err = OpenCheckpoint(p, head)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Done("0:a") || !c.Done("0:b") || c.Done("0:c") || c.Count() != 2 {
		t.Fatalf("after reopening: a %v b %v c %v", c.Done("0:a"), c.Done("0:b"), c.Done("0:c"))
	}
	c.Mark("0:c")
	c.Close()
	c, _ = OpenCheckpoint(p, head)
	if !c.Done("0:c") || c.Count() != 3 {
		t.Fatal("the unit marked after the torn line is lost")
	}
	c.Close()
	if _, err := OpenCheckpoint(p, map[string]string{"kind": "test", "input": "other"}); !errors.Is(err, ErrOtherWork) {
		t.Fatalf("a checkpoint of other work: %v", err)
	}
}
