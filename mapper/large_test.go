package mapper_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/store"
)

// shout is a TextMarshaler stored as a string.
type shout string

func (s shout) MarshalText() ([]byte, error)  { return []byte(strings.ToUpper(string(s))), nil }
func (s *shout) UnmarshalText(b []byte) error { *s = shout(strings.ToLower(string(b))); return nil }

type LargeInner struct {
	Text shout `table:",large"`
}

type LargeDoc struct {
	PK    string `table:",pk"`
	RK    string `table:",rk"`
	Title string
	Body  string   `table:"Content,large"`
	Scan  *[]byte  `table:",large"`
	Tags  []string `table:",json,large,omitempty"`
	*LargeInner
}

// The tag option large marks string, binary, text and json properties;
// LargeFields lists them with their property names, Go paths and stored
// types, in field order.
func TestLargeFields(t *testing.T) {
	got, err := mapper.LargeFields[LargeDoc]()
	if err != nil {
		t.Fatal(err)
	}
	want := []mapper.LargeField{
		{Property: "Content", Field: "Body", Type: store.EdmString},
		{Property: "Scan", Field: "Scan", Type: store.EdmBinary},
		{Property: "Tags", Field: "Tags", Type: store.EdmString},
		{Property: "Text", Field: "LargeInner.Text", Type: store.EdmString},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("LargeFields: %+v\nwant %+v", got, want)
	}
	if got, err := mapper.LargeFields[struct {
		PK, RK string `table:",pk"`
	}](); err == nil || got != nil {
		t.Fatalf("an unmappable type: %v, %v", got, err)
	}
	type none struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		X  string
	}
	if got, err := mapper.LargeFields[none](); err != nil || len(got) != 0 {
		t.Fatalf("a type without large fields: %v, %v", got, err)
	}
}

// The option is refused where it cannot mean anything, naming the field.
func TestLargeTagRefused(t *testing.T) {
	type onKey struct {
		PK string `table:",pk,large"`
		RK string `table:",rk"`
	}
	type onInt struct {
		PK string `table:",pk"`
		RK string `table:",rk"`
		N  int64  `table:",large"`
	}
	type onETag struct {
		PK   string `table:",pk"`
		RK   string `table:",rk"`
		ETag string `table:",large"` // an ETag by its name
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{onKey{}, `large cannot go with "pk"`},
		{onInt{}, "N: tag option large needs a field stored as a string or as binary"},
		{onETag{}, "ETag: tag option large goes on a property, not on the etag field"},
	} {
		_, err := mapper.Encode(c.v)
		var me *mapper.Error
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%T: %v, want an error containing %q", c.v, err, c.want)
		}
	}
}

// EncodeLarge lets large values pass the property limits and holds every
// other field to them; Encode holds all of them.
func TestEncodeLarge(t *testing.T) {
	big := strings.Repeat("b", store.MaxStringUnits+1)
	scan := make([]byte, store.MaxBinaryBytes+1)
	d := LargeDoc{PK: "p", RK: "r", Title: "t", Body: big, Scan: &scan, LargeInner: &LargeInner{Text: "quiet"}}
	e, err := mapper.EncodeLarge(&d)
	if err != nil {
		t.Fatal(err)
	}
	if e.Properties["Content"] != big || len(e.Properties["Scan"].([]byte)) != len(scan) || e.Properties["Text"] != "QUIET" || e.Properties["Title"] != "t" {
		t.Fatalf("EncodeLarge: %v", e.Properties)
	}
	if _, ok := e.Properties["Tags"]; ok {
		t.Fatal("an empty omitempty json field was stored")
	}
	var back LargeDoc
	if err := mapper.Decode(e, &back); err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("Decode of the large entity: %v", err)
	}
	_, err = mapper.Encode(&d)
	if !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "Body") {
		t.Fatalf("Encode of a large value: %v, want PropertyValueTooLarge naming Body", err)
	}
	d.Title = big
	if _, err := mapper.EncodeLarge(&d); !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "Title") {
		t.Fatalf("EncodeLarge of a long value that is not large: %v", err)
	}
}

// Through a plain Repository a type with large fields behaves like any
// other while its values fit; a value past a limit is refused, naming the
// field, and nothing is stored; an entity whose large property holds a
// blob reference (stored as the other type, as patterns/large writes it)
// is refused on read, naming the field, rather than decoded as data.
func TestRepositoryOfALargeType(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		table := b.NewTable(t, "maplarge")
		r := mapper.NewRepository[LargeDoc](b.Store, table)
		scan := []byte{1, 2, 3}
		in := LargeDoc{PK: "p", RK: "small", Title: "t", Body: "short", Scan: &scan, Tags: []string{"a"}, LargeInner: &LargeInner{Text: "x"}}
		if err := r.Insert(ctx, &in); err != nil {
			t.Fatal(err)
		}
		if out, err := r.Get(ctx, "p", "small"); err != nil || !reflect.DeepEqual(out, in) {
			t.Fatalf("round trip of small values: %v\n%+v\n%+v", err, out, in)
		}
		big := LargeDoc{PK: "p", RK: "big", Body: strings.Repeat("b", store.MaxStringUnits+1)}
		if err := r.Insert(ctx, &big); !errors.Is(err, store.ErrTooLarge) || !strings.Contains(err.Error(), "Body") {
			t.Fatalf("a large value through a Repository: %v", err)
		}
		if _, err := r.Get(ctx, "p", "big"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the refused value was stored: %v", err)
		}
		ref := store.Entity{PartitionKey: "p", RowKey: "ref", Properties: map[string]any{
			"Title": "t", "Content": []byte("tkblob:v1;enc=none;len=9;crc32c=00000000;name=x/_p/_ref/Content/1")}}
		if _, err := b.Store.Table(table).Insert(ctx, ref); err != nil {
			t.Fatal(err)
		}
		_, err := r.Get(ctx, "p", "ref")
		if err == nil || !strings.Contains(err.Error(), "Body") || !strings.Contains(err.Error(), "tagged large") {
			t.Fatalf("a blob reference read through a Repository: %v", err)
		}
		t.Logf("%s: %v", b.Name, err)
		n := 0
		for _, err := range r.Query(ctx, mapper.Where[LargeDoc]("PartitionKey").Eq("p")) {
			if err != nil && strings.Contains(err.Error(), "tagged large") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("a query met %d refusals of the reference, want 1", n)
		}
	})
}
