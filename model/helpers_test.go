package model_test

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablekit/tablekit/core/eventual"
	"github.com/tablekit/tablekit/internal/eventualtest"
	"github.com/tablekit/tablekit/keys"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/patterns/large"
	"github.com/tablekit/tablekit/store"
)

type Employee struct {
	Dept     string     `table:",pk"`
	ID       string     `table:",rk"`
	ETag     store.ETag `table:",etag"`
	Email    string
	Badge    string
	LastName string
	Team     string
	N        int
	Photo    []byte `table:"-"` // kept in a blob with fBlob
}

// sameProps reports whether a and b hold the same properties (the photo,
// which a read does not fetch, left out).
func sameProps(a, b Employee) bool {
	a.Photo, b.Photo = nil, nil
	return reflect.DeepEqual(a, b)
}

// feature names of the composition tests.
const (
	fUnique  = "unique"  // Unique("badge") in the partition
	fIndex   = "index"   // Index("team") in the partition, its copies projected (teamProj)
	fGUnique = "gunique" // GlobalUnique("email")
	fGIndex  = "gindex"  // GlobalIndex("lastname"), its copies projected (lastnameProj)
	fLog     = "log"
	fCopy    = "copy" // CopyToEach("card"): Email, and LastName as Surname, onto a card, a badge and (a red team's) a red row
	fBlob    = "blob" // Blob("photo"): Photo in a blob
	fList    = "list" // List("family"): the ids of a partition's entities by LastName
	// fTables puts email and lastname (with fGUnique, fGIndex) each in
	// an index table of its own (In).
	fTables = "tables"
)

// The projections of the composition's non-unique indexes: their copies
// hold only these properties, the unique ones every property.
var (
	teamProj     = []string{"Team", "N"}
	lastnameProj = []string{"LastName", "N"}
)

// listSegmentUnits is the fixtures' Options.ListSegmentUnits: two or
// three of the tests' ids to a segment.
const listSegmentUnits = 12

var allFeatures = []string{fUnique, fIndex, fGUnique, fGIndex, fLog, fCopy, fBlob, fList}

// cardsTable is the table of the card rows of the fixture being built,
// blobContainer the container of its photos, indexTables the tables of
// its email and lastname indexes (fTables; "": the entity's table).
var (
	cardsTable, blobContainer string
	indexTables               [2]string
)

// in puts global index g in table t, when t is set.
func in(g model.Feature[Employee], t string) model.Feature[Employee] {
	if t == "" {
		return g
	}
	return g.In(t)
}

// cardPartitions are the partitions of the target rows of fCopy: an
// entity maps to its row of the first two, and to its row of "red" while
// its team is red (a target set that changes with the entity's values).
var cardPartitions = []string{"cards", "badges", "red"}

func cardsOf(e *Employee) []store.RowRef {
	out := []store.RowRef{{Table: cardsTable, PartitionKey: "cards", RowKey: mustJoin(e.Dept, e.ID)},
		{Table: cardsTable, PartitionKey: "badges", RowKey: mustJoin(e.Dept, e.ID)}}
	if e.Team == "red" {
		out = append(out, store.RowRef{Table: cardsTable, PartitionKey: "red", RowKey: mustJoin(e.Dept, e.ID)})
	}
	return out
}

func features(names []string) []model.Feature[Employee] {
	var out []model.Feature[Employee]
	for _, n := range names {
		switch n {
		case fUnique:
			out = append(out, model.Unique("badge", func(e *Employee) string { return e.Badge }))
		case fIndex:
			out = append(out, model.Index("team", func(e *Employee) string { return e.Team }).Project(teamProj...))
		case fGUnique:
			out = append(out, in(model.GlobalUnique("email", func(e *Employee) string { return e.Email }), indexTables[0]))
		case fGIndex:
			out = append(out, in(model.GlobalIndex("lastname", func(e *Employee) string { return e.LastName }).Project(lastnameProj...), indexTables[1]))
		case fLog:
			out = append(out, model.Log[Employee]())
		case fCopy:
			out = append(out, model.CopyToEach("card", []string{cardsTable}, cardsOf, "Email", "LastName").Rename("LastName", "Surname"))
		case fBlob:
			out = append(out, model.Blob("photo", blobContainer, func(e *Employee) *[]byte { return &e.Photo }))
		case fList:
			out = append(out, model.List("family", func(e *Employee) string { return e.LastName }))
		}
	}
	return out
}

// fixture is one model over a fresh table on one backend, with its
// engine; restart builds both again over the same store (after a crash).
type fixture struct {
	e     eventualtest.Env
	st    store.Store
	table string
	o     eventualtest.Options
	mo    model.Options
	names []string
	cards string
	blobs string // the photos' container (fBlob)
	// itables are the tables of email and lastname (fTables)
	itables [2]string
	skew    atomic.Int64
	eng     *eventual.Engine
	m       *model.Model[Employee]
}

func newFixture(t *testing.T, e eventualtest.Env, st store.Store, names []string) *fixture {
	t.Helper()
	if st == nil {
		st = e.B.Store
	}
	f := &fixture{e: e, st: st, names: names}
	f.table = e.B.NewTable(t, "Model")
	if f.has(fCopy) {
		f.cards = e.B.NewTable(t, "Cards")
		for _, cp := range cardPartitions {
			var rows []store.Action
			for _, d := range []string{"Sales", "Ops"} {
				for _, p := range []string{"w0-", "w1-", "w2-", "c"} {
					for i := 0; i < 3; i++ {
						rows = append(rows, store.Action{Kind: store.ActionInsert, Entity: store.Entity{PartitionKey: cp,
							RowKey: mustJoin(d, fmt.Sprintf("%s%d", p, i)), Properties: map[string]any{"Holder": "card"}}})
					}
				}
			}
			if _, err := e.B.Store.Table(f.cards).Transact(context.Background(), rows); err != nil {
				t.Fatal(err)
			}
		}
	}
	if f.has(fTables) {
		f.itables = [2]string{e.B.NewTable(t, "Emails"), e.B.NewTable(t, "Names")}
	}
	if f.has(fBlob) {
		f.blobs = "p" + strings.ToLower(f.table)
		c := e.B.Store.Container(f.blobs)
		if err := c.Create(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background()) })
	}
	f.o = e.Opts("model")
	// The model's clock: the env's, which pastGrace moves past the blobs'
	// grace period on Azurite too (the service's clock cannot be moved).
	f.mo = model.Options{Now: func() time.Time { return e.Now().Add(time.Duration(f.skew.Load())) }}
	if f.has(fList) {
		// Small segments, so that the lists of the proofs split and join.
		f.mo.ListSegmentUnits = listSegmentUnits
	}
	// The queues are made once, through the real store.
	eventualtest.NewEngine(t, e.B.Store, f.o)
	f.restart(t)
	return f
}

func (f *fixture) restart(t *testing.T) {
	t.Helper()
	eng, err := f.o.New(f.st)
	if err != nil {
		t.Fatal(err)
	}
	mo := f.mo
	mo.Engine = eng
	cardsTable, blobContainer, indexTables = f.cards, f.blobs, f.itables
	m, err := model.Define(f.st, f.table, &mo, features(f.names)...)
	if err != nil {
		t.Fatal(err)
	}
	f.eng, f.m = eng, m
}

func (f *fixture) drain(t *testing.T) {
	t.Helper()
	eventualtest.Drain(t, f.e, &f.eng, f.o, f.e.B.Store, f.table)
}

func (f *fixture) has(n string) bool {
	for _, x := range f.names {
		if x == n {
			return true
		}
	}
	return false
}

// report is what the independent check of a drained table found.
// orphans (blobs no entity names) are not bad by themselves: a crash
// leaves them until the sweep; the tests that sweep check them.
type report struct {
	entities, copies, logRows, claimsLeft, blobs int
	lost, duplicated, older, orphans             []string
}

func (r report) bad() bool { return len(r.lost)+len(r.duplicated)+len(r.older) > 0 }

func (r report) String() string {
	return fmt.Sprintf("entities %d, copies %d, log rows %d, claims left %d, blobs %d: lost %d %v, duplicated %d %v, older-over-newer %d %v, orphan blobs %d %v",
		r.entities, r.copies, r.logRows, r.claimsLeft, r.blobs, len(r.lost), r.lost, len(r.duplicated), r.duplicated, len(r.older), r.older, len(r.orphans), r.orphans)
}

// pastGrace lets the blobs' grace period go by: the fake clock moves on
// memstore, the model's clock on Azurite.
func (f *fixture) pastGrace() {
	d := model.DefaultBlobGrace + time.Minute
	if f.e.Fake() {
		f.e.Pass(d)
		return
	}
	f.skew.Add(int64(d))
}

// sweep runs the model's blob sweep past the grace period.
func (f *fixture) sweep(t *testing.T) model.BlobSweepReport {
	t.Helper()
	if !f.has(fBlob) {
		return model.BlobSweepReport{}
	}
	f.pastGrace()
	rep, err := f.m.SweepBlobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// holds reports whether entity got, as Get returned it, is want: its
// properties, and (with fBlob) the photo ReadBlob reads, none for a nil
// or empty want.Photo.
func (f *fixture) holds(t *testing.T, got, want *Employee) bool {
	t.Helper()
	g := *got
	g.ETag = ""
	if !sameProps(g, *want) {
		return false
	}
	if !f.has(fBlob) {
		return true
	}
	b, err := f.m.ReadBlob(context.Background(), got.Dept, got.ID, "photo")
	if len(want.Photo) == 0 {
		return store.EntityNotFound(err)
	}
	return err == nil && bytes.Equal(b, want.Photo)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// verifyBlobs checks, independently of the model's code, that every
// entity's reference names a blob of the container that holds the
// length and CRC-32C it records (lost otherwise), and lists the blobs no
// entity names (orphans; the markers of moves beside a blob aside).
func (f *fixture) verifyBlobs(t *testing.T, rows []store.Entity, r *report) {
	t.Helper()
	ctx := context.Background()
	c := f.e.B.Store.Container(f.blobs)
	named := map[string]bool{}
	for _, row := range rows {
		s, _ := row.Properties[model.BlobPropertyPrefix+"photo"].(string)
		if s == "" {
			continue
		}
		if p, _ := keys.Split(row.RowKey); len(p) != 2 || p[0] != "e" {
			r.duplicated = append(r.duplicated, fmt.Sprintf("row (%q, %q) is not an entity and names a blob", row.PartitionKey, row.RowKey))
			continue
		}
		ref, err := large.ParseRef(s)
		if err != nil {
			r.lost = append(r.lost, fmt.Sprintf("entity (%q, %q): reference %q: %v", row.PartitionKey, row.RowKey, s, err))
			continue
		}
		named[ref.Blob] = true
		data, _, err := c.Get(ctx, ref.Blob)
		switch {
		case err != nil:
			r.lost = append(r.lost, fmt.Sprintf("entity (%q, %q) names blob %s: %v", row.PartitionKey, row.RowKey, ref.Blob, err))
		case int64(len(data)) != ref.Size || crc32.Checksum(data, castagnoli) != ref.CRC32C:
			r.lost = append(r.lost, fmt.Sprintf("entity (%q, %q): blob %s does not hold what its reference records", row.PartitionKey, row.RowKey, ref.Blob))
		}
	}
	all := map[string]bool{}
	var names []string
	for marker := ""; ; {
		page, err := c.List(ctx, store.BlobListOptions{Marker: marker})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Blobs {
			all[b.Name] = true
			names = append(names, b.Name)
		}
		if marker = page.NextMarker; marker == "" {
			break
		}
	}
	for _, n := range names {
		r.blobs++
		if main, ok := strings.CutSuffix(n, ".moved"); ok {
			if !all[main] {
				r.orphans = append(r.orphans, n+" (a marker without its blob)")
			}
			continue
		}
		if !named[n] {
			r.orphans = append(r.orphans, n)
		}
	}
}

type stored struct {
	pk, id  string
	v       int64
	props   map[string]any
	emp     Employee
	logTop  int64
	logSeen bool
}

func ownProps(p map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		if !strings.HasPrefix(k, "Tk") {
			out[k] = v
		}
	}
	return out
}

// projected is the properties of p a copy projecting names holds.
func projected(p map[string]any, names []string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		if v, ok := p[n]; ok {
			out[n] = v
		}
	}
	return out
}

func same(a, b map[string]any) bool { return reflect.DeepEqual(ownProps(a), ownProps(b)) }

// verify reads the whole table and checks, independently of the model's
// code, that every entity's copies and log agree with it and that no
// copy is left that no entity maps to.
func (f *fixture) verify(t *testing.T) report {
	t.Helper()
	ctx := context.Background()
	var r report
	ents := map[string]*stored{} // Join(pk, id)
	var rows []store.Entity
	for row, err := range store.All(ctx, f.e.B.Store.Table(f.table), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	if f.has(fBlob) {
		f.verifyBlobs(t, rows, &r)
	}
	if f.has(fTables) {
		for _, row := range rows {
			if pp, _ := keys.Split(row.PartitionKey); len(pp) == 3 && pp[0] == "x" {
				r.duplicated = append(r.duplicated, fmt.Sprintf("index row (%q, %q) in the entity table, not in its own", row.PartitionKey, row.RowKey))
			}
		}
	}
	for _, it := range f.itables {
		if it == "" {
			continue
		}
		for row, err := range store.All(ctx, f.e.B.Store.Table(it), store.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			if pp, _ := keys.Split(row.PartitionKey); len(pp) != 3 || pp[0] != "x" {
				r.duplicated = append(r.duplicated, fmt.Sprintf("row (%q, %q) of index table %s is no index row", row.PartitionKey, row.RowKey, it))
			}
			rows = append(rows, row)
		}
	}
	entKey := func(pk, id string) string { k, _ := keys.Join(pk, id); return k }
	for _, row := range rows {
		parts, err := keys.Split(row.RowKey)
		if err != nil || row.RowKey == "" || strings.HasPrefix(row.RowKey, "\uFFFD") {
			continue
		}
		if pp, _ := keys.Split(row.PartitionKey); len(pp) == 3 && pp[0] == "x" {
			continue
		}
		if _, resv := row.Properties[model.MovingFromProperty]; resv {
			continue // a reservation a crashed Move left: no entity
		}
		if parts[0] == "e" && len(parts) == 2 {
			s := &stored{pk: row.PartitionKey, id: parts[1], v: eventual.VersionOf(&row), props: row.Properties}
			s.emp = Employee{Dept: row.PartitionKey, ID: parts[1]}
			s.emp.Email, _ = row.Properties["Email"].(string)
			s.emp.Badge, _ = row.Properties["Badge"].(string)
			s.emp.LastName, _ = row.Properties["LastName"].(string)
			s.emp.Team, _ = row.Properties["Team"].(string)
			ents[entKey(s.pk, s.id)] = s
			r.entities++
		}
	}
	// Rows that must exist, keyed by table/pk/rk -> (entity, version).
	type want struct {
		s    *stored
		name string
	}
	wanted := map[[2]string]want{}
	for _, s := range ents {
		add := func(name, pk, rk string) { wanted[[2]string{pk, rk}] = want{s, name} }
		if f.has(fUnique) && s.emp.Badge != "" {
			rk, _ := keys.Join("u", "badge", s.emp.Badge)
			add("badge", s.pk, rk)
		}
		if f.has(fIndex) && s.emp.Team != "" {
			rk, _ := keys.Join("i", "team", s.emp.Team, s.id)
			add("team", s.pk, rk)
		}
		if f.has(fGUnique) && s.emp.Email != "" {
			pk, _ := keys.Join("x", "email", s.emp.Email)
			add("email", pk, "u")
		}
		if f.has(fGIndex) && s.emp.LastName != "" {
			pk, _ := keys.Join("x", "lastname", s.emp.LastName)
			rk, _ := keys.Join(f.table, s.pk, s.id)
			add("lastname", pk, rk)
		}
	}
	found := map[[2]string]bool{}
	k2 := func(pk, rk string) [2]string { return [2]string{pk, rk} }
	lists := map[[2]string][]*store.Entity{} // (pk, Join("n", list, value)) -> its segments
	for _, row := range rows {
		if row.RowKey == "" || strings.HasPrefix(row.RowKey, "\uFFFD") {
			continue
		}
		parts, _ := keys.Split(row.RowKey)
		pp, _ := keys.Split(row.PartitionKey)
		global := len(pp) == 3 && pp[0] == "x"
		if !global && len(parts) > 0 && parts[0] == "e" {
			continue
		}
		if !global && (len(parts) == 3 || len(parts) == 4) && parts[0] == "n" {
			k := k2(row.PartitionKey, mustJoin(parts[:3]...))
			lists[k] = append(lists[k], &row)
			continue
		}
		if !global && len(parts) > 0 && parts[0] == "l" {
			r.logRows++
			s := ents[entKey(row.PartitionKey, parts[1])]
			if s == nil {
				continue // the history of a deleted entity
			}
			if v := eventual.VersionOf(&row); v > s.logTop {
				s.logTop = v
				s.logSeen = same(row.Properties, s.props)
			}
			continue
		}
		k := [2]string{row.PartitionKey, row.RowKey}
		w, ok := wanted[k]
		v := eventual.VersionOf(&row)
		if global && v == 0 {
			if ok && w.name == "email" || ok && w.name == "lastname" {
				// The entity's claim, its copy never written.
				r.lost = append(r.lost, fmt.Sprintf("%s copy of %s/%s is a bare claim", w.name, w.s.pk, w.s.id))
				found[k] = true
				continue
			}
			r.claimsLeft++
			continue
		}
		r.copies++
		if !ok {
			r.duplicated = append(r.duplicated, fmt.Sprintf("row (%q, %q) v%d belongs to no entity", row.PartitionKey, row.RowKey, v))
			continue
		}
		found[k] = true
		if global {
			if src, _ := row.Properties[model.SourceRowProperty].(string); src != mustJoin("e", w.s.id) ||
				row.Properties[model.SourcePartitionProperty] != w.s.pk {
				r.duplicated = append(r.duplicated, fmt.Sprintf("%s copy (%q, %q) names another entity", w.name, row.PartitionKey, row.RowKey))
				continue
			}
		}
		props := w.s.props
		switch w.name {
		case "team":
			props = projected(props, teamProj)
		case "lastname":
			props = projected(props, lastnameProj)
		}
		if v < w.s.v || !same(row.Properties, props) {
			r.older = append(r.older, fmt.Sprintf("%s copy of %s/%s at v%d, entity at v%d", w.name, w.s.pk, w.s.id, v, w.s.v))
		}
	}
	for k, w := range wanted {
		if !found[k] {
			r.lost = append(r.lost, fmt.Sprintf("%s copy of %s/%s missing", w.name, w.s.pk, w.s.id))
		}
	}
	if f.has(fList) {
		f.verifyLists(ents, lists, &r)
	}
	if f.has(fLog) {
		for _, s := range ents {
			if s.logTop != s.v || !s.logSeen {
				r.older = append(r.older, fmt.Sprintf("log of %s/%s: newest v%d, entity v%d", s.pk, s.id, s.logTop, s.v))
			}
		}
	}
	if f.has(fCopy) {
		f.verifyCards(t, ents, &r)
	}
	sort.Strings(r.lost)
	sort.Strings(r.duplicated)
	sort.Strings(r.older)
	sort.Strings(r.orphans)
	return r
}

// photo draws the photo of write i: empty (none) or 1 to 3,000 bytes
// (a value the write of another i never holds).
func photo(r interface{ IntN(int) int }, i int) []byte {
	n := r.IntN(4) * r.IntN(1000)
	if n == 0 {
		return []byte{}
	}
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*7 + j*31)
	}
	copy(b, fmt.Sprintf("photo %d:", i))
	return b
}

func mustJoin(parts ...string) string {
	k, err := keys.Join(parts...)
	if err != nil {
		panic(err)
	}
	return k
}

// verifyCards checks the target rows of fCopy: each row an entity maps
// to holds its Email and its LastName (as Surname) at its version; the
// others hold neither.
func (f *fixture) verifyCards(t *testing.T, ents map[string]*stored, r *report) {
	t.Helper()
	for row, err := range store.All(context.Background(), f.e.B.Store.Table(f.cards), store.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		parts, _ := keys.Split(row.RowKey)
		s := ents[mustJoin(parts[0], parts[1])]
		_, hasEmail := row.Properties["Email"]
		_, hasSurname := row.Properties["Surname"]
		if row.Properties["Holder"] != "card" {
			r.lost = append(r.lost, fmt.Sprintf("%s row %v lost its own property", row.PartitionKey, parts))
		}
		if s == nil || row.PartitionKey == "red" && s.emp.Team != "red" {
			if hasEmail || hasSurname {
				r.duplicated = append(r.duplicated, fmt.Sprintf("%s row %v holds a copy of an entity deleted or mapping elsewhere", row.PartitionKey, parts))
			}
			continue
		}
		r.copies++
		switch {
		case !hasEmail:
			r.lost = append(r.lost, fmt.Sprintf("%s row of %s/%s has no copy", row.PartitionKey, s.pk, s.id))
		case row.Properties["Email"] != s.props["Email"] || row.Properties["Surname"] != s.props["LastName"] ||
			row.Properties["TkDn_card_V"] != s.v:
			r.older = append(r.older, fmt.Sprintf("%s row of %s/%s: %v %v at v%v, entity %v %v at v%d", row.PartitionKey, s.pk, s.id,
				row.Properties["Email"], row.Properties["Surname"], row.Properties["TkDn_card_V"], s.props["Email"], s.props["LastName"], s.v))
		}
	}
}

// verifyLists checks the list rows against the entities: the segments
// of each value of a partition name exactly the entities of the
// partition holding it, each once, no segment is empty, and no value
// held lacks its list.
func (f *fixture) verifyLists(ents map[string]*stored, lists map[[2]string][]*store.Entity, r *report) {
	want := map[[2]string][]string{}
	for _, s := range ents {
		if s.emp.LastName != "" {
			k := [2]string{s.pk, mustJoin("n", "family", s.emp.LastName)}
			want[k] = append(want[k], s.id)
		}
	}
	named := func(k [2]string) []string {
		var got []string
		for _, row := range lists[k] {
			s, _ := row.Properties[model.ListProperty].(string)
			if s == "" {
				r.duplicated = append(r.duplicated, fmt.Sprintf("list segment (%q, %q) names no id", row.PartitionKey, row.RowKey))
				continue
			}
			for _, id := range strings.Split(s, "\n") {
				if slices.Contains(got, id) {
					r.duplicated = append(r.duplicated, fmt.Sprintf("list (%q, %q) names %s in two segments", k[0], k[1], id))
				}
				got = append(got, id)
			}
		}
		return got
	}
	for k, ids := range want {
		sort.Strings(ids)
		got := named(k)
		for _, id := range ids {
			if !slices.Contains(got, id) {
				r.lost = append(r.lost, fmt.Sprintf("list family of %s/%s does not name it", k[0], id))
			}
		}
		for _, id := range got {
			if !slices.Contains(ids, id) {
				r.duplicated = append(r.duplicated, fmt.Sprintf("list (%q, %q) names %s, which does not hold its value", k[0], k[1], id))
			}
		}
	}
	for k := range lists {
		if _, ok := want[k]; !ok {
			r.duplicated = append(r.duplicated, fmt.Sprintf("list (%q, %q) names %v; no entity holds its value", k[0], k[1], named(k)))
		}
	}
}
