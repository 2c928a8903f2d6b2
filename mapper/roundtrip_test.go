package mapper

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/wire"
)

const roundTrips = 300

// Every supported Go type survives Encode then Decode unchanged.
func TestRoundTripEntity(t *testing.T) {
	g := newGen(1)
	for i := range roundTrips {
		in := g.allTypes()
		e, err := Encode(&in)
		if err != nil {
			t.Fatalf("case %d: Encode: %v\n%+v", i, err, in)
		}
		if err := store.ValidateEntity(&e); err != nil {
			t.Fatalf("case %d: the encoded entity breaks a service rule: %v", i, err)
		}
		var out AllTypes
		if err := Decode(e, &out); err != nil {
			t.Fatalf("case %d: Decode: %v", i, err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("case %d: round trip changed the value\n in %+v\nout %+v", i, in, out)
		}
	}
}

// AppendJSON writes the same bytes as wire.AppendEntity of the entity
// Encode returns, and DecodeJSON reads them back to the same value.
func TestRoundTripWire(t *testing.T) {
	g := newGen(2)
	var buf []byte
	for i := range roundTrips {
		in := g.allTypes()
		e, err := Encode(&in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wire.AppendEntity(nil, &e)
		if err != nil {
			t.Fatal(err)
		}
		buf, err = AppendJSON(buf[:0], &in)
		if err != nil {
			t.Fatalf("case %d: AppendJSON: %v", i, err)
		}
		if !bytes.Equal(buf, want) {
			t.Fatalf("case %d: AppendJSON differs from wire.AppendEntity\n got %s\nwant %s", i, buf, want)
		}
		var out AllTypes
		if err := DecodeJSON(buf, &out); err != nil {
			t.Fatalf("case %d: DecodeJSON: %v\n%s", i, err, buf)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("case %d: wire round trip changed the value\n in %+v\nout %+v\n%s", i, in, out, buf)
		}
	}
}

// Through memstore: insert, read back, and compare; the service-set ETag
// and Timestamp come back in their fields.
func TestRoundTripMemstore(t *testing.T) {
	ctx := context.Background()
	r, _ := newRepo[AllTypes](t)
	g := newGen(3)
	for i := range roundTrips {
		in := g.allTypes()
		in.RK = fmt.Sprintf("%s_%d", in.RK, i) // unique keys: no case overwrites another
		if err := r.Upsert(ctx, &in, store.Replace); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		out, err := r.Get(ctx, in.PK, in.RK)
		if err != nil {
			t.Fatal(err)
		}
		if out.ETag != in.ETag || out.When.IsZero() {
			t.Fatalf("case %d: ETag %q (written %q), Timestamp %v", i, out.ETag, in.ETag, out.When)
		}
		in.When = out.When
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("case %d: memstore round trip changed the value\n in %+v\nout %+v", i, in, out)
		}
	}
}
