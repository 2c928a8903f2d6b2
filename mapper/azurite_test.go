package mapper

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

// azuriteStore returns a store on the Azurite that make test starts (see
// azuritetest.Conn for the skip and require rules).
func azuriteStore(t *testing.T) store.Store {
	t.Helper()
	st, err := azstore.NewFromConnectionString(azuritetest.Conn(t), &azstore.Options{
		Services: []azstore.Service{azqueues.Service(), azblobs.Service()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Every supported Go type survives a write to Azurite and a read back,
// through the Azure backend's real wire path.
func TestRoundTripAzurite(t *testing.T) {
	st := azuriteStore(t)
	ctx := context.Background()
	table := fmt.Sprintf("MapperRoundTrip%d", os.Getpid())
	if err := st.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background(), table) })
	r := NewRepository[AllTypes](st, table)
	g := newGen(4)
	written := map[[2]string]AllTypes{}
	for i := range 120 {
		in := g.allTypes()
		in.RK = fmt.Sprintf("%s_%d", in.RK, i)
		if err := r.Upsert(ctx, &in, store.Replace); err != nil {
			t.Fatalf("case %d: %v\n%+v", i, err, in)
		}
		out, err := r.Get(ctx, in.PK, in.RK)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if out.ETag != in.ETag || out.When.IsZero() {
			t.Fatalf("case %d: ETag %q (written %q), Timestamp %v", i, out.ETag, in.ETag, out.When)
		}
		in.When = out.When
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("case %d: Azurite round trip changed the value\n in %+v\nout %+v", i, in, out)
		}
		written[[2]string{in.PK, in.RK}] = in
	}
	// Query, which decodes whole pages of the service's response, gives
	// back the same values.
	n := 0
	for out, err := range r.Query(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if in := written[[2]string{out.PK, out.RK}]; !reflect.DeepEqual(in, out) {
			t.Fatalf("query changed the value\n in %+v\nout %+v", in, out)
		}
		n++
	}
	if n != 120 {
		t.Fatalf("query returned %d entities, want 120", n)
	}
}

// BulkWrite runs over the Azure backend unchanged: values across several
// partitions are written and read back with their ETags.
func TestBulkWriteAzurite(t *testing.T) {
	st := azuriteStore(t)
	ctx := context.Background()
	table := fmt.Sprintf("MapperBulk%d", os.Getpid())
	if err := st.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteTable(context.Background(), table) })
	r := NewRepository[person](st, table)
	values := make([]*person, 250)
	for i := range values {
		values[i] = &person{Dept: fmt.Sprintf("d%d", i%3), ID: fmt.Sprintf("%04d", i), Name: fmt.Sprint("n", i), Age: int32(i)}
	}
	res, err := r.BulkWrite(ctx, store.ActionInsert, values, store.BulkOptions{})
	if err != nil || res.Written != len(values) {
		t.Fatalf("BulkWrite: %v (written %d)", err, res.Written)
	}
	for _, i := range []int{0, 1, 2, 124, 249} {
		got, err := r.Get(ctx, values[i].Dept, values[i].ID)
		if err != nil || got.Name != values[i].Name || got.ETag != values[i].ETag {
			t.Fatalf("value %d read back as %+v (%v), ETag %s", i, got, err, values[i].ETag)
		}
	}
}
