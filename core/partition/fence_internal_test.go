package partition

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablekit/tablekit/store"
)

// The fence remembers exactly the last History writers, each at its
// version, and a fence row read back decodes to the same history.
func TestWriterHistory(t *testing.T) {
	for history := 1; history <= 5; history++ {
		f := Fence{pk: "p"}
		for n := 1; n <= 9; n++ {
			v, w := f.next(fmt.Sprintf("id%d", n), history)
			e := fenceEntity("p", v, w)
			e.ETag = `W/"x"`
			var err error
			if f, err = fenceOf(&e); err != nil {
				t.Fatalf("history %d, write %d: %v", history, n, err)
			}
			if f.Version != int64(n) {
				t.Fatalf("history %d: version %d after %d writes", history, f.Version, n)
			}
			for ver := int64(0); ver <= int64(n)+1; ver++ {
				id, ok := f.writerOf(ver)
				remembered := ver >= 1 && ver <= int64(n) && int64(n)-ver < int64(history)
				if ok != remembered || (ok && id != fmt.Sprintf("id%d", ver)) {
					t.Fatalf("history %d after %d writes: writerOf(%d) = %q, %v", history, n, ver, id, ok)
				}
			}
		}
	}
}

// Fence and tail rows the package did not write are reported, not
// trusted.
func TestCorruptReservedRows(t *testing.T) {
	cases := []map[string]any{
		{},
		{propVersion: "7", propWriters: []byte("a")},
		{propVersion: int64(0), propWriters: []byte("a")},
		{propVersion: int64(1)},
		{propVersion: int64(1), propWriters: []byte{}},
		{propVersion: int64(1), propWriters: []byte("a,b")},
	}
	for _, props := range cases {
		e := store.Entity{PartitionKey: "p", RowKey: FenceKey, Properties: props}
		if _, err := fenceOf(&e); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("fence %v: %v, want ErrCorrupt", props, err)
		}
	}
	e := store.Entity{PartitionKey: "p", RowKey: OutboxPrefix + "x", Properties: map[string]any{propTopic: "t"}}
	if _, err := outboxRowOf(&e); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("outbox row without its properties: %v", err)
	}
}
