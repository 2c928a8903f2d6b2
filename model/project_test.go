package model_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/mapper"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/storetest"
)

// projEnv is a model of Employee over a fresh table with its own engine.
type projEnv struct {
	e     eventualtest.Env
	table string
	o     eventualtest.Options
	eng   *eventual.Engine
	m     *model.Model[Employee]
}

func newProjEnv(t *testing.T, e eventualtest.Env, label string, feats ...model.Feature[Employee]) *projEnv {
	t.Helper()
	p := &projEnv{e: e, table: e.B.NewTable(t, label), o: e.Opts(strings.ToLower(label))}
	p.eng = eventualtest.NewEngine(t, e.B.Store, p.o)
	m, err := model.Define(e.B.Store, p.table, &model.Options{Engine: p.eng, Now: e.Now}, feats...)
	if err != nil {
		t.Fatal(err)
	}
	p.m = m
	return p
}

func (p *projEnv) drain(t *testing.T) {
	t.Helper()
	eventualtest.Drain(t, p.e, &p.eng, p.o, p.e.B.Store, p.table)
}

func (p *projEnv) row(t *testing.T, pk, rk string) store.Entity {
	t.Helper()
	row, err := p.e.B.Store.Table(p.table).Get(context.Background(), pk, rk, nil)
	if err != nil {
		t.Fatalf("raw read (%q, %q): %v", pk, rk, err)
	}
	return row
}

// ownOf is a row's properties that are not the model's.
func ownOf(row store.Entity) map[string]any { return ownProps(row.Properties) }

// TestProjectRefusals: Define refuses a projection naming a property the
// type lacks, one naming a property twice, and one on a feature that is
// not an index, naming what is wrong.
func TestProjectRefusals(t *testing.T) {
	e := eventualtest.MemEnv()
	st := e.B.Store
	eng := eventualtest.NewEngine(t, st, e.Opts("projref"))
	team := func(e *Employee) string { return e.Team }
	for _, c := range []struct {
		name string
		feat model.Feature[Employee]
		want string
	}{
		{"unknown", model.Index("team", team).Project("Team", "Salary"), `index team projects "Salary", which is not a property of model_test.Employee`},
		{"a key", model.Unique("team", team).Project("Dept"), `projects "Dept", which is not a property`},
		{"twice", model.GlobalIndex("team", team).Project("N", "Team", "N"), `index team projects "N" twice`},
		{"a log", model.Log[Employee]().Project("N"), "log: Project applies to an index"},
		{"a list", model.List("family", team).Project("N"), "family: Project applies to an index"},
		{"a copy", model.CopyTo("card", "Cards", func(e *Employee) (string, string) { return "cards", e.ID }, "Email").Project("Email"), "card: Project applies to an index"},
	} {
		_, err := model.Define(st, "ProjRef", &model.Options{Engine: eng}, c.feat)
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Indexes describes what was declared, projections included.
	m, err := model.Define(st, "ProjOK", &model.Options{Engine: eng}, model.Log[Employee](),
		model.Unique("badge", func(e *Employee) string { return e.Badge }).Project("N", "Team"),
		model.Index("team", team).Project(),
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%#v", m.Indexes())
	want := `[]model.IndexInfo{model.IndexInfo{Name:"badge", Unique:true, Global:false, Table:"ProjOK", Projection:[]string{"N", "Team"}}, ` +
		`model.IndexInfo{Name:"team", Unique:false, Global:false, Table:"ProjOK", Projection:[]string{}}, ` +
		`model.IndexInfo{Name:"lastname", Unique:false, Global:true, Table:"ProjOK", Projection:[]string(nil)}}`
	if got != want {
		t.Errorf("Indexes() = %s\nwant %s", got, want)
	}
}

// TestProjectedCopies: a projected index's copies hold only the named
// properties (and the model's own), in the partition and in the index
// table; a lookup through one returns the entity from its own row with
// its ETag; a write of a property the copies do not hold leaves Check
// clean (a projected copy is not behind for lacking the others); a copy
// changed without the model is refused by the lookup and reported and
// mended by Check and Repair, which writes it projected again.
func TestProjectedCopies(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		p := newProjEnv(t, e, "Proj",
			model.Unique("badge", func(e *Employee) string { return e.Badge }).Project("LastName"),
			model.Index("team", func(e *Employee) string { return e.Team }).Project(),
			model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }).Project("Team"),
			model.Unique("email", func(e *Employee) string { return e.Email })) // a full copy beside
		ann := &Employee{Dept: "Sales", ID: "ann", Email: "ann@x", Badge: "B1", LastName: "Jones", Team: "red", N: 1}
		bob := &Employee{Dept: "Sales", ID: "bob", Email: "bob@x", Badge: "B2", LastName: "Jones", Team: "red", N: 2}
		for _, x := range []*Employee{ann, bob} {
			if err := p.m.Insert(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		p.drain(t)
		badge := p.row(t, "Sales", mustJoin("u", "badge", "B1"))
		if got := ownOf(badge); !maps.Equal(got, map[string]any{"LastName": "Jones"}) {
			t.Fatalf("the projected copy holds %v", got)
		}
		if badge.Properties[model.IDProperty] != "ann" || badge.Properties[model.SumProperty] == nil || eventual.VersionOf(&badge) <= 0 {
			t.Fatalf("the projected copy lacks the model's properties: %v", badge.Properties)
		}
		if got := ownOf(p.row(t, "Sales", mustJoin("i", "team", "red", "bob"))); len(got) != 0 {
			t.Fatalf("the keys-only copy holds %v", got)
		}
		gl := p.row(t, mustJoin("x", "lastname", "Jones"), mustJoin(p.table, "Sales", "ann"))
		if got := ownOf(gl); !maps.Equal(got, map[string]any{"Team": "red"}) {
			t.Fatalf("the projected global copy holds %v", got)
		}
		if got := ownOf(p.row(t, "Sales", mustJoin("u", "email", "ann@x"))); len(got) != 5 {
			t.Fatalf("the full copy holds %v", got)
		}

		// Lookups: the whole entity, with its ETag, through a projection.
		cur, err := p.m.Get(ctx, "Sales", "ann")
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.m.FindIn(ctx, "Sales", "badge", "B1")
		if err != nil || !sameProps(*got, *cur) || got.ETag == "" || got.ETag != cur.ETag {
			t.Fatalf("FindIn through a projection = %+v, %v; want %+v", got, err, cur)
		}
		if full, err := p.m.FindIn(ctx, "Sales", "email", "ann@x"); err != nil || full.N != 1 || full.ETag != "" {
			t.Fatalf("FindIn through a full copy = %+v, %v", full, err)
		}
		all, err := p.m.FindAllIn(ctx, "Sales", "team", "red")
		if err != nil || len(all) != 2 || all[0].ID != "ann" || all[1].N != 2 || all[1].ETag == "" {
			t.Fatalf("FindAllIn through keys-only copies = %+v, %v", all, err)
		}
		if g, err := p.m.FindAll(ctx, "lastname", "Jones"); err != nil || len(g) != 2 || g[0].N+g[1].N != 3 {
			t.Fatalf("FindAll through projected global copies = %+v, %v", g, err)
		}

		// A write of a property no projection holds: every copy is at
		// the entity's version, and Check finds nothing behind.
		ann.N = 10
		ann.ETag = ""
		if err := p.m.Update(ctx, ann, store.Merge); err != nil {
			t.Fatal(err)
		}
		p.drain(t)
		rep, err := p.m.Check(ctx, nil)
		if err != nil || !rep.Clean() {
			t.Fatalf("Check after a write outside the projections: %s, %v", rep, err)
		}
		if got, err := p.m.FindIn(ctx, "Sales", "badge", "B1"); err != nil || got.N != 10 {
			t.Fatalf("FindIn after the write = %+v, %v", got, err)
		}

		// Copies changed without the model: the partition copy's projected
		// property, the global copy given a property it does not project.
		badge = p.row(t, "Sales", mustJoin("u", "badge", "B1"))
		badge.Properties["LastName"] = "Smith"
		if _, err := e.B.Store.Table(p.table).Update(ctx, badge, store.Replace, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		var be *model.BypassError
		if _, err := p.m.FindIn(ctx, "Sales", "badge", "B1"); !errors.As(err, &be) || be.RowKey != badge.RowKey {
			t.Fatalf("FindIn through a changed projected copy: %v", err)
		}
		gl = p.row(t, mustJoin("x", "lastname", "Jones"), mustJoin(p.table, "Sales", "bob"))
		gl.Properties["N"] = int64(-1)
		if _, err := e.B.Store.Table(p.table).Update(ctx, gl, store.Replace, store.ETagAny); err != nil {
			t.Fatal(err)
		}
		rep, err = p.m.Check(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []key{
			{model.DriftBehind, "badge", p.table, "Sales", badge.RowKey},
			{model.DriftBehind, "lastname", p.table, gl.PartitionKey, gl.RowKey},
		}
		if got := keysOf(rep.Findings); !slices.Equal(got, want) {
			t.Fatalf("Check found\n%v\nwant\n%v", got, want)
		}
		if rep, err = p.m.Repair(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, fd := range rep.Findings {
			if fd.Outcome != model.Repaired {
				t.Fatalf("Repair: %s", fd)
			}
		}
		p.drain(t)
		if rep, err = p.m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check after Repair: %s, %v", rep, err)
		}
		if got := ownOf(p.row(t, "Sales", badge.RowKey)); !maps.Equal(got, map[string]any{"LastName": "Jones"}) {
			t.Fatalf("the repaired copy holds %v", got)
		}
		if got := ownOf(p.row(t, gl.PartitionKey, gl.RowKey)); !maps.Equal(got, map[string]any{"Team": "red"}) {
			t.Fatalf("the repaired global copy holds %v", got)
		}

		// The entity row deleted without the model: the projected lookup
		// reads it and reports the copy naming an entity not there.
		if err := e.B.Store.Table(p.table).Delete(ctx, "Sales", mustJoin("e", "bob"), store.ETagAny); err != nil {
			t.Fatal(err)
		}
		if _, err := p.m.FindIn(ctx, "Sales", "badge", "B2"); !errors.As(err, &be) || !strings.Contains(be.Reason, `"bob", which is not there`) {
			t.Fatalf("FindIn through the copy of an entity deleted without the model: %v", err)
		}
		if _, err := p.m.FindAllIn(ctx, "Sales", "team", "red"); !errors.Is(err, model.ErrBypassed) {
			t.Fatalf("FindAllIn through the copy of an entity deleted without the model: %v", err)
		}
	})
}

// projRangeValues are index values that test the escaping's order: the parts'
// separator, its neighbours, '/' and '#', control characters, non-ASCII
// (accents, CJK, a character beyond the BMP, one of U+E000-U+FFFF, which
// UTF-16 sorts after it).
var projRangeValues = []string{"a", "a !b", "a !", "a ", "a!", "a/b", "a#", "a\x01", "a\x1f", "ab", "b", "A", "a.",
	"é", "日本", "日", "😀x", "\uE000x", "!", " !", "a !b !c"}

// extraIDs are the ids of entities whose non-unique value is "a".
var extraIDs = []string{"b", "b !c"}

// rangeIndexes are the four kinds of partition index a range reads.
var rangeIndexes = []string{"u", "i", "up", "ip"}

func rangeModel(t *testing.T, e eventualtest.Env) *projEnv {
	t.Helper()
	badge := func(e *Employee) string { return e.Badge }
	team := func(e *Employee) string { return e.Team }
	p := newProjEnv(t, e, "Range",
		model.Unique("u", badge), model.Index("i", team),
		model.Unique("up", badge).Project("N"), model.Index("ip", team).Project())
	ctx := context.Background()
	var ents []*Employee
	for i, v := range projRangeValues {
		// Unique values: each once; non-unique: each on two entities.
		ents = append(ents, &Employee{Dept: "D", ID: fmt.Sprintf("e%02d", i), Badge: v, Team: v, N: i},
			&Employee{Dept: "D", ID: fmt.Sprintf("z%02d", i), Team: v, N: 100 + i})
	}
	// Ids that, after value "a" and the separator, read like the values
	// "a !b" and "a !b !c": a prefix must not match into the id.
	for _, id := range extraIDs {
		ents = append(ents, &Employee{Dept: "D", ID: id, Team: "a"})
	}
	ents = append(ents, &Employee{Dept: "Other", ID: "o", Badge: "a", Team: "a"}) // another partition
	for _, x := range ents {
		if err := p.m.Insert(ctx, x); err != nil {
			t.Fatalf("insert %+v: %v", x, err)
		}
	}
	return p
}

// expected lists, by brute force over what was inserted, the (value, id)
// of the entities of partition D whose index value keep accepts, in the
// order the service sorts keys.
func expected(index string, keep func(string) bool) []string {
	type hit struct{ v, id string }
	var hits []hit
	for i, v := range projRangeValues {
		if keep(v) {
			hits = append(hits, hit{v, fmt.Sprintf("e%02d", i)})
			if strings.HasPrefix(index, "i") {
				hits = append(hits, hit{v, fmt.Sprintf("z%02d", i)})
				if v == "a" {
					for _, id := range extraIDs {
						hits = append(hits, hit{v, id})
					}
				}
			}
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Or(keys.Compare(a.v, b.v), keys.Compare(a.id, b.id)) })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.v + "|" + h.id
	}
	return out
}

func collect(t *testing.T, index string, seq func(yield func(*Employee, error) bool)) []string {
	t.Helper()
	var out []string
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		val := v.Team
		if strings.HasPrefix(index, "u") {
			val = v.Badge
		}
		if v.Dept != "D" || (index == "ip" || index == "up") && v.ETag == "" {
			t.Fatalf("index %s yielded %+v", index, v)
		}
		out = append(out, val+"|"+v.ID)
	}
	return out
}

// TestRangeAndPrefixIn: RangeIn and PrefixIn yield exactly the entities
// whose value lies in the range or starts with the prefix, in the
// service's key order (value, then id), through unique and non-unique,
// full and projected indexes, for values holding the compound keys'
// separator and the characters the escaping changes; a prefix never
// matches across the separator into the id.
func TestRangeAndPrefixIn(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		p := rangeModel(t, e)
		prefixes := []string{"", "a", "a ", "a !", "a !b", "a !b !", "a/", "a#", "a\x01", "a\x1f", "é", "日", "😀", "\uE000", "zz", "!", " "}
		for _, idx := range rangeIndexes {
			for _, pre := range prefixes {
				want := expected(idx, func(v string) bool { return strings.HasPrefix(v, pre) })
				if got := collect(t, idx, p.m.PrefixIn(ctx, "D", idx, pre)); !slices.Equal(got, want) {
					t.Errorf("PrefixIn %s %q =\n%q\nwant\n%q", idx, pre, got, want)
				}
			}
			for _, r := range [][2]string{{"a", "b"}, {"a !", "a/"}, {"", ""}, {"b", ""}, {"\x00", "a"}, {"a", "a"},
				{"a !", "a !b"}, {"é", "\uE001"}, {"日", "日本"}, {"😀", "\uE000"}, {"a\x01", "a "}, {"a !b !", "a!"}} {
				want := expected(idx, func(v string) bool {
					return keys.Compare(v, r[0]) >= 0 && (r[1] == "" || keys.Compare(v, r[1]) < 0)
				})
				if got := collect(t, idx, p.m.RangeIn(ctx, "D", idx, r[0], r[1])); !slices.Equal(got, want) {
					t.Errorf("RangeIn %s [%q, %q) =\n%q\nwant\n%q", idx, r[0], r[1], got, want)
				}
			}
			for _, v := range []string{"a !b", "a\x01", "😀x"} {
				want := expected(idx, func(x string) bool { return x == v })
				if got := collect(t, idx, p.m.EachIn(ctx, "D", idx, v)); !slices.Equal(got, want) {
					t.Errorf("EachIn %s %q = %q, want %q", idx, v, got, want)
				}
			}
		}
		// Stopping early stops the read.
		n := 0
		for _, err := range p.m.RangeIn(ctx, "D", "ip", "", "") {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 3 {
				break
			}
		}
	})
}

// TestRangeInRefusals: a global index, an unknown one, a bound no key can
// hold and a nil context are refused with errors matching
// store.ErrInvalidInput.
func TestRangeInRefusals(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	p := newProjEnv(t, e, "RangeRef", model.Index("team", func(e *Employee) string { return e.Team }),
		model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }))
	first := func(seq func(yield func(*Employee, error) bool)) error {
		for _, err := range seq {
			return err
		}
		return nil
	}
	long := strings.Repeat("x", 1100)
	var nilCtx context.Context
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"global range", first(p.m.RangeIn(ctx, "D", "lastname", "a", "b")), "index lastname is global"},
		{"global prefix", first(p.m.PrefixIn(ctx, "D", "lastname", "a")), "index lastname is global"},
		{"unknown", first(p.m.PrefixIn(ctx, "D", "nosuch", "a")), `no index "nosuch"`},
		{"long from", first(p.m.RangeIn(ctx, "D", "team", long, "")), "index team: from"},
		{"long to", first(p.m.RangeIn(ctx, "D", "team", "a", long)), "index team: to"},
		{"long prefix", first(p.m.PrefixIn(ctx, "D", "team", long)), "index team: prefix"},
		{"bad utf-8", first(p.m.EachIn(ctx, "D", "team", "\xff")), "index team: value"},
		{"nil context", first(p.m.EachIn(nilCtx, "D", "team", "a")), "the context is nil"},
	} {
		if !errors.Is(c.err, store.ErrInvalidInput) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, c.err, c.want)
		}
	}
}

// TestProjectedEncrypted: projected copies of encrypted properties, in
// the partition and in the index table, stay encrypted: nothing the
// backend keeps holds the plaintext, the lookups return it, and Check
// judges the copies (read through the decrypting store) clean.
func TestProjectedEncrypted(t *testing.T) {
	eventualtest.EachBackend(t, func(t *testing.T, e eventualtest.Env) {
		ctx := context.Background()
		table := e.B.NewTable(t, "encproj")
		props, err := mapper.EncryptedProperties[Patient]()
		if err != nil {
			t.Fatal(err)
		}
		spied, spy := enctest.Wrap(e.B.Store)
		st := enctest.Codec(t, props...).Store(spied)
		o := e.Opts("encproj")
		eng := eventualtest.NewEngine(t, st, o)
		m, err := model.Define(st, table, &model.Options{Engine: eng, Now: e.Now},
			model.Unique("bed", func(p *Patient) string { return p.Bed }).Project("Name"),
			model.Index("doctor", func(p *Patient) string { return p.Doctor }).Project("Diagnosis", "Doctor"),
			model.GlobalIndex("gdoctor", func(p *Patient) string { return p.Doctor }).Project("Name"))
		if err != nil {
			t.Fatal(err)
		}
		p := &Patient{Ward: "w1", ID: "p1", Name: secretName, Diagnosis: secretDiag, Doctor: "house", Bed: "b7"}
		if err := m.Insert(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.Diagnosis, p.ETag = newDiag, ""
		if err := m.Update(ctx, p, store.Replace); err != nil {
			t.Fatal(err)
		}
		eventualtest.Drain(t, e, &eng, o, st, table)
		if got, err := m.FindIn(ctx, "w1", "bed", "b7"); err != nil || got.Name != secretName || got.Diagnosis != newDiag {
			t.Fatalf("FindIn = %+v, %v", got, err)
		}
		for got, err := range m.PrefixIn(ctx, "w1", "doctor", "ho") {
			if err != nil || got.Diagnosis != newDiag || got.Name != secretName {
				t.Fatalf("PrefixIn = %+v, %v", got, err)
			}
		}
		if all, err := m.FindAll(ctx, "gdoctor", "house"); err != nil || len(all) != 1 || all[0].Name != secretName {
			t.Fatalf("FindAll = %+v, %v", all, err)
		}
		if rep, err := m.Check(ctx, nil); err != nil || !rep.Clean() {
			t.Fatalf("Check: %s, %v", rep, err)
		}
		// The copies hold the projected (encrypted) properties only.
		rows, err := enctest.Rows(ctx, e.B.Store, table)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, row := range rows {
			if parts, _ := keys.Split(row.RowKey); len(parts) > 0 && (parts[0] == "u" || parts[0] == "i") {
				n++
				if _, ok := row.Properties["Bed"]; ok {
					t.Errorf("copy %q holds a property it does not project: %v", row.RowKey, row.Properties)
				}
			}
		}
		if n != 2 {
			t.Fatalf("%d partition copies, want 2", n)
		}
		leaks := spy.Leaks(secretName, secretDiag, newDiag)
		stored, err := enctest.Scan(ctx, e.B.Store, []string{table}, secretName, secretDiag, newDiag)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range append(leaks, stored...) {
			t.Error("plaintext reached the backend: ", l)
		}
	})
}

// TestProjectedLookupRacesAWrite: a write that moves the entity off the
// value, or deletes it, between the read of a projected copy and the read
// of its entity is not taken for a copy written without the model: the
// lookup reads the copy again and finds nothing, and a range read skips
// the entity.
func TestProjectedLookupRacesAWrite(t *testing.T) {
	e := eventualtest.MemEnv()
	ctx := context.Background()
	var race func()
	var armed atomic.Bool
	hook := func(ctx context.Context, c storetest.Call, do func(context.Context) error) error {
		err := do(ctx)
		if (c.Op == "Table.Get" && strings.HasPrefix(c.RowKey, "u !") || c.Op == "Table.Query") && armed.CompareAndSwap(true, false) {
			race()
		}
		return err
	}
	st := storetest.WrapStore(e.B.Store, hook)
	table := e.B.NewTable(t, "ProjRace")
	eng := eventualtest.NewEngine(t, st, e.Opts("projrace"))
	m, err := model.Define(st, table, &model.Options{Engine: eng, Now: e.Now},
		model.Unique("badge", func(e *Employee) string { return e.Badge }).Project("N"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ann", "bob"} {
		if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: id, Badge: "B-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	// Ann gives her badge up right after her copy was read.
	race = func() {
		if err := m.Update(ctx, &Employee{Dept: "Sales", ID: "ann", Badge: "B-new"}, store.Replace); err != nil {
			t.Error(err)
		}
	}
	armed.Store(true)
	if _, err := m.FindIn(ctx, "Sales", "badge", "B-ann"); !store.EntityNotFound(err) {
		t.Fatalf("FindIn raced by a write taking the value away: %v", err)
	}
	// Bob is deleted right after his copy was read.
	race = func() {
		if err := m.Delete(ctx, "Sales", "bob", ""); err != nil {
			t.Error(err)
		}
	}
	armed.Store(true)
	if _, err := m.FindIn(ctx, "Sales", "badge", "B-bob"); !store.EntityNotFound(err) {
		t.Fatalf("FindIn raced by a delete: %v", err)
	}
	// A range read whose page was read before a write moved one entity
	// off its value yields the others only.
	for _, id := range []string{"cy", "dee"} {
		if err := m.Insert(ctx, &Employee{Dept: "Sales", ID: id, Badge: "C-" + id}); err != nil {
			t.Fatal(err)
		}
	}
	race = func() {
		if err := m.Update(ctx, &Employee{Dept: "Sales", ID: "cy", Badge: "Z-cy"}, store.Replace); err != nil {
			t.Error(err)
		}
	}
	armed.Store(true)
	var got []string
	for v, err := range m.PrefixIn(ctx, "Sales", "badge", "C-") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.ID)
	}
	if !slices.Equal(got, []string{"dee"}) {
		t.Fatalf("PrefixIn raced by a write = %v, want [dee]", got)
	}
}
