package memstore

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/sas"
)

// The Azurite development account: the only key in the repository.
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

var sasT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// sasFixture is a store on a settable clock with table "orders" holding
// (p,01) (p,02) (p,03) (q,01).
type sasFixture struct {
	s    *Store
	mu   sync.Mutex
	now  time.Time
	cred *sas.Credential
}

func newSASFixture(t testing.TB) *sasFixture {
	t.Helper()
	f := &sasFixture{now: sasT0}
	f.s = New(WithAccount(devAccount, devKey), WithClock(func() time.Time {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.now
	}))
	var err error
	if f.cred, err = sas.NewCredential(devAccount, devKey); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := f.s.CreateTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	for _, k := range [][2]string{{"p", "01"}, {"p", "02"}, {"p", "03"}, {"q", "01"}} {
		if _, err := f.s.Table("orders").Insert(ctx, store.Entity{PartitionKey: k[0], RowKey: k[1], Properties: map[string]any{"N": int32(1)}}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *sasFixture) set(t time.Time) { f.mu.Lock(); f.now = t; f.mu.Unlock() }

// sign signs v, defaulting the table to orders and the expiry to an hour.
func (f *sasFixture) sign(t testing.TB, v sas.TableValues) string {
	t.Helper()
	if v.Table == "" {
		v.Table = "orders"
	}
	if v.Expiry.IsZero() && v.Identifier == "" {
		v.Expiry = sasT0.Add(time.Hour)
	}
	token, err := v.Sign(f.cred)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func (f *sasFixture) view(t testing.TB, v sas.TableValues, opts ...SASOption) store.Table {
	return f.s.WithSAS(f.sign(t, v), opts...).Table("orders")
}

func sasKeys(es []store.Entity) string {
	var b []string
	for _, e := range es {
		b = append(b, e.PartitionKey+"/"+e.RowKey)
	}
	return strings.Join(b, " ")
}

func sasWant(t *testing.T, what string, err error, code string, status int) {
	t.Helper()
	if store.Code(err) != code || store.Status(err) != status {
		t.Fatalf("%s: got %v, want %s (%d)", what, err, code, status)
	}
}

func sasQueryAll(t *testing.T, tb store.Table, filter string) string {
	t.Helper()
	var all []store.Entity
	q := store.Query{Filter: filter}
	for {
		page, err := tb.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("query %q: %v", filter, err)
		}
		all = append(all, page.Entities...)
		if page.Continuation == "" {
			return sasKeys(all)
		}
		q.Continuation = page.Continuation
	}
}

// TestSASRanges: with srk=erk=01 the service returns one row where Azurite
// returns two; memstore returns one. A point read outside is 404, a
// write outside 403 AuthorizationFailure.
func TestSASRanges(t *testing.T) {
	f := newSASFixture(t)
	ctx := context.Background()
	one := f.view(t, sas.TableValues{Permissions: "raud", StartPK: "p", StartRK: "01", EndPK: "p", EndRK: "01"})
	if got := sasQueryAll(t, one, ""); got != "p/01" {
		t.Fatalf("query under srk=erk=01: %q, want p/01", got)
	}
	if got := sasQueryAll(t, one, "RowKey ge '00' or PartitionKey eq 'q'"); got != "p/01" {
		t.Fatalf("filtered query: %q, want p/01", got)
	}
	if _, err := one.Get(ctx, "p", "01", nil); err != nil {
		t.Fatal(err)
	}
	_, err := one.Get(ctx, "p", "02", nil)
	sasWant(t, "get outside", err, store.CodeResourceNotFound, 404)
	_, err = one.Insert(ctx, store.Entity{PartitionKey: "p", RowKey: "04"})
	sasWant(t, "insert outside", err, store.CodeAuthorizationFailure, 403)
	sasWant(t, "delete outside", one.Delete(ctx, "q", "01", store.ETagAny), store.CodeAuthorizationFailure, 403)
	if _, err := one.Upsert(ctx, store.Entity{PartitionKey: "p", RowKey: "01", Properties: map[string]any{"N": int32(2)}}, store.Merge); err != nil {
		t.Fatal(err)
	}

	span := f.view(t, sas.TableValues{Permissions: "r", StartPK: "p", StartRK: "02", EndPK: "q", EndRK: "01"})
	if got := sasQueryAll(t, span, ""); got != "p/02 p/03 q/01" {
		t.Fatalf("query over (p,02)-(q,01): %q", got)
	}
	part := f.view(t, sas.TableValues{Permissions: "r", StartPK: "q", EndPK: "q"})
	visits := 0
	f.s.visits = func() { visits++ }
	if got := sasQueryAll(t, part, "N eq 1"); got != "q/01" {
		t.Fatalf("partition q: %q", got)
	}
	f.s.visits = nil
	if visits > 1 {
		t.Fatalf("the query under partition q visited %d rows: the range is not in its plan", visits)
	}
	// Pages of one row follow the continuation through the range.
	page, err := span.Query(ctx, store.Query{Top: 1})
	if err != nil || sasKeys(page.Entities) != "p/02" || page.Continuation == "" {
		t.Fatalf("first page: %v %v", sasKeys(page.Entities), err)
	}
	page, err = span.Query(ctx, store.Query{Top: 1, Continuation: page.Continuation})
	if err != nil || sasKeys(page.Entities) != "p/03" {
		t.Fatalf("second page: %v %v", sasKeys(page.Entities), err)
	}
}

// TestSASRangeWithLongFilter: a filter at the comparison limit still gets
// the range (applied to the rows found, as the combined filter would
// exceed the limit), on Query and QueryInto alike.
func TestSASRangeWithLongFilter(t *testing.T) {
	f := newSASFixture(t)
	one := f.view(t, sas.TableValues{Permissions: "r", StartPK: "p", StartRK: "01", EndPK: "p", EndRK: "01"})
	var parts []string
	for i := range store.MaxFilterComparisons {
		parts = append(parts, fmt.Sprintf("N ne %d", 100+i))
	}
	long := strings.Join(parts, " and ")
	if got := sasQueryAll(t, one, long); got != "p/01" {
		t.Fatalf("long filter: %q", got)
	}
	var got []string
	q := store.Query{Filter: long}
	for {
		cont, _, err := one.(store.TypedTable).QueryInto(context.Background(), q, func() store.EntityReader {
			r := &sasKeyReader{}
			got = append(got, "")
			r.out = &got[len(got)-1]
			return r
		})
		if err != nil {
			t.Fatal(err)
		}
		if cont == "" {
			break
		}
		q.Continuation = cont
	}
	if strings.Join(got, " ") != "p/01" {
		t.Fatalf("QueryInto: %q", got)
	}
}

// sasKeyReader records an entity's keys.
type sasKeyReader struct {
	store.EntityReader
	out *string
	pk  string
}

func (r *sasKeyReader) SetPartitionKey(pk string) error     { r.pk = pk; return nil }
func (r *sasKeyReader) SetRowKey(rk string) error           { *r.out = r.pk + "/" + rk; return nil }
func (r *sasKeyReader) SetTimestamp(time.Time) error        { return nil }
func (r *sasKeyReader) SetETag(store.ETag) error            { return nil }
func (r *sasKeyReader) SetInt32(name string, v int32) error { return nil }

// TestSASPermissions: r for reads, a for inserts, u for updates, a and u
// for upserts, d for deletes; each action of a transaction.
func TestSASPermissions(t *testing.T) {
	f := newSASFixture(t)
	ctx := context.Background()
	e := store.Entity{PartitionKey: "p", RowKey: "09"}
	add := f.view(t, sas.TableValues{Permissions: "a"})
	_, err := add.Get(ctx, "p", "01", nil)
	sasWant(t, "get with a", err, store.CodeAuthorizationPermissionMismatch, 403)
	_, err = add.Query(ctx, store.Query{})
	sasWant(t, "query with a", err, store.CodeAuthorizationPermissionMismatch, 403)
	_, err = add.Upsert(ctx, e, store.Replace)
	sasWant(t, "upsert with a", err, store.CodeAuthorizationPermissionMismatch, 403)
	if _, err := add.Insert(ctx, e); err != nil {
		t.Fatal(err)
	}
	_, err = add.Update(ctx, e, store.Merge, store.ETagAny)
	sasWant(t, "update with a", err, store.CodeAuthorizationPermissionMismatch, 403)
	sasWant(t, "delete with a", add.Delete(ctx, "p", "09", store.ETagAny), store.CodeAuthorizationPermissionMismatch, 403)

	au := f.view(t, sas.TableValues{Permissions: "ua"})
	if _, err := au.Upsert(ctx, e, store.Merge); err != nil {
		t.Fatal(err)
	}
	_, err = au.Transact(ctx, []store.Action{
		{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "10"}},
		{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "09"}, IfMatch: store.ETagAny},
	})
	sasWant(t, "transaction with a delete", err, store.CodeAuthorizationPermissionMismatch, 403)
	if store.Index(err) != 1 {
		t.Fatalf("index %d, want 1", store.Index(err))
	}
	all := f.view(t, sas.TableValues{Permissions: "raud"})
	if _, err := all.Transact(ctx, []store.Action{
		{Kind: store.ActionUpsertMerge, Entity: store.Entity{PartitionKey: "p", RowKey: "10"}},
		{Kind: store.ActionDelete, Entity: store.Entity{PartitionKey: "p", RowKey: "09"}, IfMatch: store.ETagAny},
	}); err != nil {
		t.Fatal(err)
	}
	d := f.view(t, sas.TableValues{Permissions: "d"})
	if err := d.Delete(ctx, "p", "10", store.ETagAny); err != nil {
		t.Fatal(err)
	}
	_, err = d.(store.TypedTable).Write(ctx, store.Action{Kind: store.ActionInsert, Entity: e})
	sasWant(t, "typed insert with d", err, store.CodeAuthorizationPermissionMismatch, 403)
}

// TestSASRefusals: time window, signature, table, table operations, IP,
// protocol, a missing account; no error holds the signature.
func TestSASRefusals(t *testing.T) {
	f := newSASFixture(t)
	ctx := context.Background()
	token := f.sign(t, sas.TableValues{Permissions: "r", Start: sasT0.Add(time.Minute), Expiry: sasT0.Add(time.Hour), IP: "10.1.0.0-10.1.255.255", Protocol: sas.HTTPS})
	sig := sasParse(t, token).Signature
	noSig := func(what string, err error) {
		t.Helper()
		if err != nil && (strings.Contains(err.Error(), sig) || strings.Contains(err.Error(), url.QueryEscape(sig))) {
			t.Fatalf("%s: the error holds the signature: %v", what, err)
		}
	}
	ip := FromIP(netip.MustParseAddr("10.1.2.3"))
	tb := f.s.WithSAS(token, ip).Table("orders")
	_, err := tb.Get(ctx, "p", "01", nil)
	sasWant(t, "before st", err, store.CodeAuthenticationFailed, 403)
	noSig("before st", err)
	f.set(sasT0.Add(time.Minute))
	if _, err := tb.Get(ctx, "p", "01", nil); err != nil {
		t.Fatal(err)
	}
	f.set(sasT0.Add(time.Hour))
	_, err = tb.Get(ctx, "p", "01", nil)
	sasWant(t, "at se", err, store.CodeAuthenticationFailed, 403)
	f.set(sasT0.Add(2 * time.Minute))

	_, err = f.s.WithSAS(token).Table("orders").Get(ctx, "p", "01", nil)
	sasWant(t, "from 127.0.0.1", err, store.CodeAuthorizationSourceIPMismatch, 403)
	_, err = f.s.WithSAS(token, ip, OverHTTP()).Table("orders").Get(ctx, "p", "01", nil)
	sasWant(t, "over HTTP", err, store.CodeAuthorizationProtocolMismatch, 403)

	forged := strings.Replace(token, "sp=r", "sp=raud", 1)
	_, err = f.s.WithSAS(forged, ip).Table("orders").Insert(ctx, store.Entity{PartitionKey: "x"})
	sasWant(t, "forged sp", err, store.CodeAuthenticationFailed, 403)
	noSig("forged sp", err)
	if err := f.s.CreateTable(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.WithSAS(token, ip).Table("other").Get(ctx, "p", "01", nil)
	sasWant(t, "other table", err, store.CodeAuthorizationFailure, 403)
	if _, err := f.s.WithSAS(token, ip).Table("ORDERS").Get(ctx, "p", "01", nil); err != nil {
		t.Fatalf("table names are case-insensitive: %v", err)
	}
	view := f.s.WithSAS(token, ip)
	sasWant(t, "create table", view.CreateTable(ctx, "more"), store.CodeAuthorizationFailure, 403)
	_, err = view.ListTables(ctx, store.ListTablesOptions{})
	sasWant(t, "list tables", err, store.CodeAuthorizationFailure, 403)
	_, err = view.Queue("q").Peek(ctx, 1)
	sasWant(t, "queue", err, store.CodeAuthorizationFailure, 403)

	_, err = New().WithSAS(token, ip).Table("orders").Get(ctx, "p", "01", nil)
	sasWant(t, "no account", err, store.CodeAuthenticationFailed, 403)
	noSig("no account", err)
	_, err = f.s.WithSAS("sv=2019-02-02&tn=orders&sp=r&sig="+url.QueryEscape(sig), ip).Table("orders").Get(ctx, "p", "01", nil)
	sasWant(t, "malformed", err, store.CodeAuthenticationFailed, 403)
	noSig("malformed", err)
}

func sasParse(t *testing.T, token string) *sas.Params {
	t.Helper()
	p, err := sas.Parse(token)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSASStoredPolicies: at most 5 policies of ids up to 64 characters; a
// token naming one takes its fields from it and is refused once it is
// gone, or when both set a field.
func TestSASStoredPolicies(t *testing.T) {
	f := newSASFixture(t)
	ctx := context.Background()
	six := make([]store.SignedIdentifier, 6)
	for i := range six {
		six[i] = store.SignedIdentifier{ID: fmt.Sprint("p", i), Policy: store.AccessPolicy{Permission: "r"}}
	}
	if err := f.s.SetAccessPolicy(ctx, "orders", six); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "at most 5") {
		t.Fatalf("six policies: %v", err)
	}
	long := []store.SignedIdentifier{{ID: strings.Repeat("x", 65)}}
	if err := f.s.SetAccessPolicy(ctx, "orders", long); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "64") {
		t.Fatalf("long id: %v", err)
	}
	bad := []store.SignedIdentifier{{ID: "w", Policy: store.AccessPolicy{Permission: "rw"}}}
	if err := f.s.SetAccessPolicy(ctx, "orders", bad); !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), "'w'") {
		t.Fatalf("permission w: %v", err)
	}
	pol := []store.SignedIdentifier{{ID: "readers", Policy: store.AccessPolicy{Permission: "ar", Expiry: sasT0.Add(time.Hour)}}}
	if err := f.s.SetAccessPolicy(ctx, "orders", pol); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.GetAccessPolicy(ctx, "orders")
	if err != nil || len(got) != 1 || got[0].Policy.Permission != "ra" {
		t.Fatalf("GetAccessPolicy: %+v %v", got, err)
	}
	tb := f.view(t, sas.TableValues{Identifier: "readers"})
	if _, err := tb.Get(ctx, "p", "01", nil); err != nil {
		t.Fatal(err)
	}
	sasWant(t, "delete under readers", tb.Delete(ctx, "p", "01", store.ETagAny), store.CodeAuthorizationPermissionMismatch, 403)
	both := f.view(t, sas.TableValues{Identifier: "readers", Permissions: "r"})
	_, err = both.Get(ctx, "p", "01", nil)
	sasWant(t, "sp in token and policy", err, store.CodeAuthenticationFailed, 403)
	f.set(sasT0.Add(time.Hour))
	_, err = tb.Get(ctx, "p", "01", nil)
	sasWant(t, "policy expired", err, store.CodeAuthenticationFailed, 403)
	f.set(sasT0)
	if err := f.s.SetAccessPolicy(ctx, "orders", nil); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Get(ctx, "p", "01", nil)
	sasWant(t, "policy revoked", err, store.CodeAuthenticationFailed, 403)
	// A table created again does not inherit the old table's policies.
	if err := f.s.SetAccessPolicy(ctx, "orders", pol); err != nil {
		t.Fatal(err)
	}
	if err := f.s.DeleteTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.CreateTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.s.GetAccessPolicy(ctx, "orders"); len(got) != 0 {
		t.Fatalf("recreated table has policies %+v", got)
	}
}

// TestSASAccount: an account SAS needs the Table service, the resource
// type (o entities, c tables) and the permission.
func TestSASAccount(t *testing.T) {
	f := newSASFixture(t)
	ctx := context.Background()
	sign := func(v sas.AccountValues) store.Store {
		v.Expiry = sasT0.Add(time.Hour)
		token, err := v.Sign(f.cred)
		if err != nil {
			t.Fatal(err)
		}
		return f.s.WithSAS(token)
	}
	ro := sign(sas.AccountValues{Services: "t", ResourceTypes: "o", Permissions: "r"})
	if _, err := ro.Table("orders").Get(ctx, "p", "01", nil); err != nil {
		t.Fatal(err)
	}
	_, err := ro.Table("orders").Insert(ctx, store.Entity{PartitionKey: "z"})
	sasWant(t, "insert with r", err, store.CodeAuthorizationPermissionMismatch, 403)
	sasWant(t, "create table with srt=o", ro.CreateTable(ctx, "more"), store.CodeAuthorizationResourceTypeMismatch, 403)
	admin := sign(sas.AccountValues{Services: "t", ResourceTypes: "co", Permissions: "rlc"})
	if err := admin.CreateTable(ctx, "more"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ListTables(ctx, store.ListTablesOptions{}); err != nil {
		t.Fatal(err)
	}
	sasWant(t, "delete table without d", admin.DeleteTable(ctx, "more"), store.CodeAuthorizationPermissionMismatch, 403)
	blob := sign(sas.AccountValues{Services: "b", ResourceTypes: "o", Permissions: "r"})
	_, err = blob.Table("orders").Get(ctx, "p", "01", nil)
	sasWant(t, "blob-only SAS", err, store.CodeAuthorizationServiceMismatch, 403)
}

// BenchmarkSASPointGetInterleaved interleaves a point get through a
// WithSAS view under a ranged token (every check: time, permission, table,
// range) with the same point get on the store itself. Run it with
//
//	go test -run '^$' -bench SASPointGetInterleaved -benchtime 1x ./memstore/
func BenchmarkSASPointGetInterleaved(b *testing.B) {
	const n = 1_000
	ctx := context.Background()
	s := New(WithAccount(devAccount, devKey))
	if err := s.CreateTable(ctx, "Bench"); err != nil {
		b.Fatal(err)
	}
	plain := s.Table("Bench")
	for i := range n {
		if _, err := plain.Insert(ctx, benchEntity(fmt.Sprintf("p%03d", i%10), rowKey(i/10), i)); err != nil {
			b.Fatal(err)
		}
	}
	cred, err := sas.NewCredential(devAccount, devKey)
	if err != nil {
		b.Fatal(err)
	}
	token, err := sas.TableValues{Table: "Bench", Permissions: "r", Expiry: time.Now().Add(time.Hour),
		StartPK: "p000", EndPK: "p009", EndRK: "99999999"}.Sign(cred)
	if err != nil {
		b.Fatal(err)
	}
	scoped := s.WithSAS(token).Table("Bench")
	get := func(t store.Table) func(i int) error {
		return func(i int) error {
			j := (i * 7919) % n
			_, err := t.Get(ctx, fmt.Sprintf("p%03d", j%10), rowKey(j/10), nil)
			return err
		}
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 61, Slice: 20 * time.Millisecond},
		interleave.Case{Name: "memstore.Get", Op: get(plain)},
		interleave.Case{Name: "WithSAS.Get", Op: get(scoped)},
	)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}

// BenchmarkSASCheck measures the per-request check of a point read under
// a ranged token alone (time window, permission, range), the cost WithSAS
// adds to every Get, on the real clock.
func BenchmarkSASCheck(b *testing.B) {
	s := New(WithAccount(devAccount, devKey))
	cred, err := sas.NewCredential(devAccount, devKey)
	if err != nil {
		b.Fatal(err)
	}
	token, err := sas.TableValues{Table: "orders", Permissions: "r", Expiry: time.Now().Add(time.Hour),
		StartPK: "p", StartRK: "01", EndPK: "q", EndRK: "99"}.Sign(cred)
	if err != nil {
		b.Fatal(err)
	}
	tb := s.WithSAS(token).Table("orders").(*sasTable)
	b.ReportAllocs()
	for b.Loop() {
		if err := tb.read("p", "02"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSASRealClock: on the real clock the window is kept by timers; a
// token refuses requests before its start and after its expiry.
func TestSASRealClock(t *testing.T) {
	ctx := context.Background()
	s := New(WithAccount(devAccount, devKey))
	if err := s.CreateTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	cred, err := sas.NewCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(start, expiry time.Time) store.Table {
		token, err := sas.TableValues{Table: "orders", Permissions: "r", Start: start, Expiry: expiry}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		return s.WithSAS(token).Table("orders")
	}
	now := time.Now()
	_, err = sign(time.Time{}, now.Add(-time.Minute)).Get(ctx, "p", "01", nil)
	sasWant(t, "expired", err, store.CodeAuthenticationFailed, 403)
	_, err = sign(now.Add(time.Hour), now.Add(2*time.Hour)).Get(ctx, "p", "01", nil)
	sasWant(t, "not yet valid", err, store.CodeAuthenticationFailed, 403)
	soon := sign(time.Time{}, now.Add(2*time.Second))
	if _, err := soon.Get(ctx, "p", "01", nil); store.Code(err) != store.CodeResourceNotFound {
		t.Fatalf("valid token: %v, want ResourceNotFound (the row is missing)", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := soon.Get(ctx, "p", "01", nil)
		if store.Code(err) == store.CodeAuthenticationFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the token still works 10 s after it was signed to expire within 2 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
