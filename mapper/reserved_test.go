package mapper

import (
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
)

type reservedByName struct {
	PK        string `table:",pk"`
	RK        string `table:",rk"`
	TkVersion int64
}

type reservedByTag struct {
	PK   string `table:",pk"`
	RK   string `table:",rk"`
	Rev  int64  `table:"TkRev"`
	Name string
}

type reservedInside struct{ TkSum string }

type reservedEmbedded struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
	reservedInside
}

type reservedKind struct {
	PK string `table:",pk"`
	RK string `table:",rk"`
}

func (reservedKind) TableKind() Kind { return Kind{Property: "TkKind", Value: "k"} }

// tkLike names its properties with "Tk" inside or in another case: only
// a name starting with store.ReservedPrefix is tablekit's.
type tkLike struct {
	PK      string `table:",pk"`
	RK      string `table:",rk"`
	Tkt     string `table:"tkVersion"`
	MyTkSum int64
	T       string
}

// TestReservedPropertyNamesRefused: a field whose property name starts
// with store.ReservedPrefix (by its Go name, its tag, or through an
// embedded struct), a kind's discriminator and a property registry's
// are refused with an error matching store.ErrInvalidInput that names
// the field, the property and the prefix; names that merely contain Tk
// are the user's.
func TestReservedPropertyNamesRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"field name", func() error { _, err := Encode(&reservedByName{}); return err }(), []string{"reservedByName.TkVersion", `"TkVersion" starts with "Tk"`, "store.ReservedPrefix"}},
		{"tag", func() error { return Decode(store.Entity{}, &reservedByTag{}) }(), []string{"reservedByTag.Rev", `"TkRev" starts with "Tk"`}},
		{"embedded", func() error { _, err := Encode(&reservedEmbedded{}); return err }(), []string{"TkSum", `starts with "Tk"`}},
		{"repository", func() error {
			_, err := NewRepository[reservedByTag](memstore.New(), "Things").Get(t.Context(), "p", "r")
			return err
		}(), []string{`"TkRev" starts with "Tk"`}},
		{"kind", func() error { _, err := Encode(&reservedKind{}); return err }(), []string{`discriminator property "TkKind" starts with "Tk"`}},
		{"property registry", func() error { _, err := NewPropertyRegistry("TkKind"); return err }(), []string{`discriminator property "TkKind" starts with "Tk"`}},
	} {
		var me *Error
		if !errors.Is(c.err, store.ErrInvalidInput) || !errors.As(c.err, &me) {
			t.Errorf("%s: %v, want a *mapper.Error matching store.ErrInvalidInput", c.name, c.err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(c.err.Error(), w) {
				t.Errorf("%s: %q does not name %s", c.name, c.err, w)
			}
		}
	}
	e, err := Encode(&tkLike{PK: "p", RK: "r", Tkt: "a", MyTkSum: 1, T: "b"})
	if err != nil || e.Properties["tkVersion"] != "a" || e.Properties["MyTkSum"] != int64(1) {
		t.Errorf("names that only contain Tk: %v, %v", e.Properties, err)
	}
}
