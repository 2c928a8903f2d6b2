package memstore

import (
	"context"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/driver"
	"github.com/tablekit/tablekit/store/filter"
	"github.com/tablekit/tablekit/store/sas"
)

// account is the storage account WithAccount names: the name and key
// shared access signatures are verified with.
type account struct {
	name string
	key  string
}

// WithAccount gives the store an account name and key (base64, as the
// portal shows it), so that WithSAS can verify tokens signed with them
// (by store/sas). The key never appears in an error.
func WithAccount(name, key string) Option {
	return func(o *options) { o.account = &account{name: name, key: key} }
}

// aclState holds the tables' stored access policies, by table (a table
// deleted and created again starts with none).
type aclState struct {
	mu       sync.RWMutex
	policies map[*table][]store.SignedIdentifier
}

var _ store.ACLStore = (*Store)(nil)

// GetAccessPolicy implements store.ACLStore.
func (s *Store) GetAccessPolicy(ctx context.Context, name string) ([]store.SignedIdentifier, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	t, err := s.lookupKey(name, strings.ToLower(name))
	if err != nil {
		return nil, err
	}
	s.acl.mu.RLock()
	defer s.acl.mu.RUnlock()
	return append([]store.SignedIdentifier(nil), s.acl.policies[t]...), nil
}

// SetAccessPolicy implements store.ACLStore: at most 5 policies, ids of
// at most 64 characters. A token naming a policy that is no longer there
// is refused from then on.
func (s *Store) SetAccessPolicy(ctx context.Context, name string, ids []store.SignedIdentifier) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := store.ValidateTableName(name); err != nil {
		return err
	}
	ids, err := driver.ValidateAccessPolicies(ids)
	if err != nil {
		return err
	}
	t, err := s.lookupKey(name, strings.ToLower(name))
	if err != nil {
		return err
	}
	s.mu.RLock()
	live := make(map[*table]bool, len(s.tables))
	for _, lt := range s.tables {
		live[lt] = true
	}
	s.mu.RUnlock()
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	if s.acl.policies == nil {
		s.acl.policies = make(map[*table][]store.SignedIdentifier)
	}
	for old := range s.acl.policies {
		if !live[old] {
			delete(s.acl.policies, old) // a deleted table's policies
		}
	}
	if len(ids) == 0 {
		delete(s.acl.policies, t)
	} else {
		s.acl.policies[t] = ids
	}
	return nil
}

// policy returns the stored access policy id of the table named key.
func (s *Store) policy(key, id string) (store.AccessPolicy, bool) {
	s.mu.RLock()
	t := s.tables[key]
	s.mu.RUnlock()
	if t == nil {
		return store.AccessPolicy{}, false
	}
	s.acl.mu.RLock()
	defer s.acl.mu.RUnlock()
	for _, p := range s.acl.policies[t] {
		if p.ID == id {
			return p.Policy, true
		}
	}
	return store.AccessPolicy{}, false
}

// SASOption describes the request a WithSAS view stands for: memstore has
// no network, so the caller states its address and protocol.
type SASOption func(*sasRequest)

type sasRequest struct {
	ip   netip.Addr
	http bool
}

// FromIP makes the view's requests come from ip (default 127.0.0.1), for
// tokens with an IP range (sip).
func FromIP(ip netip.Addr) SASOption { return func(r *sasRequest) { r.ip = ip } }

// OverHTTP makes the view's requests plain HTTP (default HTTPS), which a
// token with spr=https refuses.
func OverHTTP() SASOption { return func(r *sasRequest) { r.http = true } }

// The permission bits of a table SAS.
const (
	permQuery uint8 = 1 << iota
	permAdd
	permUpdate
	permDelete
)

func permBits(s string) uint8 {
	var b uint8
	for _, c := range s {
		switch c {
		case 'r':
			b |= permQuery
		case 'a':
			b |= permAdd
		case 'u':
			b |= permUpdate
		case 'd':
			b |= permDelete
		}
	}
	return b
}

// WithSAS returns a view of the store that authorizes every request with
// token, a table service SAS or an account SAS signed for the account of
// WithAccount, as the service does:
//
//   - a signature that does not verify, a token outside its time window
//     by the store's clock (WithClock), or one naming a stored access
//     policy the table no longer has: 403 AuthenticationFailed;
//   - an operation the permissions do not allow (r for Get and Query, a
//     for Insert, u for Update, a and u for Upsert, d for Delete; each
//     action of a transaction checked): 403
//     AuthorizationPermissionMismatch;
//   - a table SAS used on another table, or for a table operation
//     (create, delete, list), or a write outside its key range: 403
//     AuthorizationFailure;
//   - an address outside sip (FromIP), or HTTP under spr=https
//     (OverHTTP): 403 AuthorizationSourceIPMismatch,
//     AuthorizationProtocolMismatch.
//
// Under a key range a query returns only the rows in the range (the range
// is ANDed to its filter) and a point read outside it answers 404
// ResourceNotFound. Queues and blob containers of the view refuse every
// request: memstore enforces shared access signatures for tables only.
// A malformed token, or a store without WithAccount, makes every request
// fail with 403 AuthenticationFailed. No error contains the signature.
func (s *Store) WithSAS(token string, opts ...SASOption) store.Store {
	req := sasRequest{ip: netip.AddrFrom4([4]byte{127, 0, 0, 1})}
	for _, o := range opts {
		o(&req)
	}
	v := &sasView{s: s}
	v.fixed = v.setup(token, req)
	return v
}

// sasView is the store.Store WithSAS returns.
type sasView struct {
	s     *Store
	p     *sas.Params
	fixed error // the refusal every request meets, found once
	// For a table SAS:
	tableKey string    // the token's table, lower case
	perm     uint8     // the token's own permissions
	start    time.Time // the token's own st, zero when not set
	expiry   time.Time // the token's own se, zero when not set
	scope    filter.Cond
	// window keeps the token's own time window when the store reads the
	// real clock: nil under WithClock.
	window *sasWindow
	// For an account SAS:
	account bool
}

// setup checks what does not change from request to request: the token's
// form and signature, the caller's address and protocol.
func (v *sasView) setup(token string, req sasRequest) error {
	p, err := sas.Parse(token)
	if err != nil {
		return authFailed("the shared access signature is malformed: %s", store.Code(err)+": "+errText(err))
	}
	v.p = p
	acct := v.s.opts.account
	if acct == nil {
		return authFailed("the store has no account key to verify the shared access signature with (memstore.WithAccount)")
	}
	cred, err := sas.NewCredential(acct.name, acct.key)
	if err != nil {
		return authFailed("the account key of memstore.WithAccount is not valid base64")
	}
	if !p.Verify(cred) {
		return authFailed("the signature does not match the token's fields signed with the key of account %q", acct.name)
	}
	if p.IP != "" {
		r, _ := sas.ParseIPRange(p.IP)
		if !r.Contains(req.ip) {
			return store.Errorf(store.CodeAuthorizationSourceIPMismatch, 403, "the request comes from %s, outside the token's IP range %s", req.ip, p.IP)
		}
	}
	if req.http && p.Protocol == string(sas.HTTPS) {
		return store.Errorf(store.CodeAuthorizationProtocolMismatch, 403, "the token allows HTTPS only (spr=https); the request is HTTP")
	}
	v.start, v.expiry = p.StartTime(), p.ExpiryTime()
	if realClock(v.s.opts.now) && !v.expiry.IsZero() {
		v.window = newSASWindow(v.start, v.expiry)
	}
	if p.IsAccount() {
		v.account = true
		if !strings.Contains(p.Services, "t") {
			return store.Errorf(store.CodeAuthorizationServiceMismatch, 403, "the account SAS grants the services %q, not the Table service (t)", p.Services)
		}
		return nil
	}
	v.tableKey = strings.ToLower(p.Table)
	v.perm = permBits(p.Permissions)
	v.scope = rangeCond(p)
	return nil
}

// rangeCond is the token's key range as a filter condition.
func rangeCond(p *sas.Params) filter.Cond {
	var parts []filter.Cond
	if p.StartPK != "" && p.StartPK == p.EndPK {
		parts = append(parts, filter.PK.Eq(p.StartPK))
		if p.StartRK != "" {
			parts = append(parts, filter.RK.Ge(p.StartRK))
		}
		if p.EndRK != "" {
			parts = append(parts, filter.RK.Le(p.EndRK))
		}
		return filter.And(parts...)
	}
	if p.StartPK != "" {
		if p.StartRK == "" {
			parts = append(parts, filter.PK.Ge(p.StartPK))
		} else {
			parts = append(parts, filter.Or(filter.PK.Gt(p.StartPK), filter.And(filter.PK.Eq(p.StartPK), filter.RK.Ge(p.StartRK))))
		}
	}
	if p.EndPK != "" {
		if p.EndRK == "" {
			parts = append(parts, filter.PK.Le(p.EndPK))
		} else {
			parts = append(parts, filter.Or(filter.PK.Lt(p.EndPK), filter.And(filter.PK.Eq(p.EndPK), filter.RK.Le(p.EndRK))))
		}
	}
	return filter.And(parts...)
}

func authFailed(format string, args ...any) *store.Error {
	return store.Errorf(store.CodeAuthenticationFailed, 403, "Server failed to authenticate the request: "+format, args...)
}

func errText(err error) string {
	if se, ok := err.(*store.Error); ok {
		return se.Message
	}
	return err.Error()
}

// entityPerm is the permission an entity write of kind needs.
func entityPerm(k store.ActionKind) uint8 {
	switch k {
	case store.ActionInsert:
		return permAdd
	case store.ActionUpdateMerge, store.ActionUpdateReplace:
		return permUpdate
	case store.ActionUpsertMerge, store.ActionUpsertReplace:
		return permAdd | permUpdate
	case store.ActionDelete:
		return permDelete
	}
	return 0xff
}

func permText(p uint8) string {
	var b []byte
	for i, c := range "raud" {
		if p&(1<<i) != 0 {
			b = append(b, byte(c))
		}
	}
	return string(b)
}

func sameTable(name, key string) bool {
	return len(name) == len(key) && strings.EqualFold(name, key)
}

// authorizeTable checks an entity request on table name that needs the
// permissions need; known says the caller has already found name to be
// the token's table.
func (v *sasView) authorizeTable(name string, need uint8, known bool) error {
	if v.fixed != nil {
		return v.fixed
	}
	if v.account {
		return v.authorizeAccount(name, 'o', accountPerm(need))
	}
	if !known && !sameTable(name, v.tableKey) {
		return store.Errorf(store.CodeAuthorizationFailure, 403, "the shared access signature is for table %q, not %q", v.p.Table, name)
	}
	perm, start, expiry := v.perm, v.start, v.expiry
	if v.p.Identifier != "" {
		pol, ok := v.s.policy(v.tableKey, v.p.Identifier)
		if !ok {
			return authFailed("the token names the stored access policy %q, which table %q does not have (deleted or never set)", v.p.Identifier, v.p.Table)
		}
		if (pol.Permission != "" && v.p.Permissions != "") || (!pol.Start.IsZero() && v.p.Start != "") || (!pol.Expiry.IsZero() && v.p.Expiry != "") {
			return authFailed("the token and its stored access policy %q both set a field (sp, st or se): only one may", v.p.Identifier)
		}
		if pol.Permission != "" {
			perm = permBits(pol.Permission)
		}
		if !pol.Start.IsZero() {
			start = pol.Start
		}
		if !pol.Expiry.IsZero() {
			expiry = pol.Expiry
		}
		if expiry.IsZero() {
			return authFailed("neither the token nor its stored access policy %q sets an expiry", v.p.Identifier)
		}
	}
	if err := v.checkWindow(start, expiry); err != nil {
		return err
	}
	if perm&need != need {
		return store.Errorf(store.CodeAuthorizationPermissionMismatch, 403, "the operation needs permission %q; the token grants %q", permText(need), permText(perm))
	}
	return nil
}

// checkWindow checks the token's time window: through the timers of
// v.window when it keeps the token's own window, else by the clock.
func (v *sasView) checkWindow(start, expiry time.Time) error {
	if w := v.window; w != nil && start.Equal(v.start) && expiry.Equal(v.expiry) && w.state.Load() == windowOpen {
		return nil
	}
	return v.inWindow(start, expiry)
}

// inWindow checks the store's clock against the token's time window.
func (v *sasView) inWindow(start, expiry time.Time) error {
	now := v.s.opts.now()
	if !start.IsZero() && now.Before(start) {
		return authFailed("the token is valid from %s; the time is %s", sas.FormatTime(start), now.UTC().Format(time.RFC3339))
	}
	if !now.Before(expiry) {
		return authFailed("the token expired at %s; the time is %s", sas.FormatTime(expiry), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// accountPerm maps a table SAS permission need to the account SAS letters
// that grant it.
func accountPerm(need uint8) string {
	var b []byte
	for i, c := range "raud" {
		if need&(1<<i) != 0 {
			b = append(b, byte(c))
		}
	}
	return string(b)
}

// authorizeAccount checks a request under an account SAS: the resource
// type (o for entities, c for tables) and every letter of need.
func (v *sasView) authorizeAccount(name string, resource byte, need string) error {
	if v.fixed != nil {
		return v.fixed
	}
	if err := v.checkWindow(v.start, v.expiry); err != nil {
		return err
	}
	if strings.IndexByte(v.p.ResourceTypes, resource) < 0 {
		return store.Errorf(store.CodeAuthorizationResourceTypeMismatch, 403, "the account SAS grants the resource types %q; the request on %q needs %q", v.p.ResourceTypes, name, string(resource))
	}
	for i := 0; i < len(need); i++ {
		if strings.IndexByte(v.p.Permissions, need[i]) < 0 {
			return store.Errorf(store.CodeAuthorizationPermissionMismatch, 403, "the operation needs permission %q; the account SAS grants %q", need, v.p.Permissions)
		}
	}
	return nil
}

// tableOp authorizes a table operation: an account SAS with srt c and one
// of the letters of anyOf; a table SAS never.
func (v *sasView) tableOp(name, anyOf string) error {
	if v.fixed != nil {
		return v.fixed
	}
	if !v.account {
		return store.Errorf(store.CodeAuthorizationFailure, 403, "a table SAS grants entity operations on its table only; creating, deleting and listing tables needs an account SAS")
	}
	for i := 0; i < len(anyOf); i++ {
		if strings.IndexByte(v.p.Permissions, anyOf[i]) >= 0 {
			return v.authorizeAccount(name, 'c', "")
		}
	}
	if err := v.authorizeAccount(name, 'c', ""); err != nil {
		return err
	}
	return store.Errorf(store.CodeAuthorizationPermissionMismatch, 403, "the operation needs one of the permissions %q; the account SAS grants %q", anyOf, v.p.Permissions)
}

// inRange reports a key the token reaches.
func (v *sasView) inRange(pk, rk string) bool { return v.account || v.p.InRange(pk, rk) }

func outOfRange(pk, rk string) error {
	return store.Errorf(store.CodeAuthorizationFailure, 403, "entity (PartitionKey %q, RowKey %q) is outside the shared access signature's key range", pk, rk)
}

// CreateTable implements store.Store.
func (v *sasView) CreateTable(ctx context.Context, name string) error {
	if err := v.tableOp(name, "acw"); err != nil {
		return err
	}
	return v.s.CreateTable(ctx, name)
}

// CreateTableIfNotExists implements store.Store.
func (v *sasView) CreateTableIfNotExists(ctx context.Context, name string) (bool, error) {
	if err := v.tableOp(name, "acw"); err != nil {
		return false, err
	}
	return v.s.CreateTableIfNotExists(ctx, name)
}

// DeleteTable implements store.Store.
func (v *sasView) DeleteTable(ctx context.Context, name string) error {
	if err := v.tableOp(name, "d"); err != nil {
		return err
	}
	return v.s.DeleteTable(ctx, name)
}

// ListTables implements store.Store.
func (v *sasView) ListTables(ctx context.Context, opts store.ListTablesOptions) (store.TablePage, error) {
	if err := v.tableOp("", "l"); err != nil {
		return store.TablePage{}, err
	}
	return v.s.ListTables(ctx, opts)
}

// Table implements store.Store.
func (v *sasView) Table(name string) store.Table {
	return &sasTable{v: v, h: v.s.Table(name).(*tableHandle), same: !v.account && sameTable(name, v.tableKey)}
}

// Queue implements store.Store: every request is refused.
func (v *sasView) Queue(name string) store.Queue { return deniedQueue(name) }

// Container implements store.Store: every request is refused.
func (v *sasView) Container(name string) store.Container { return deniedContainer(name) }

// sasTable is a table of a WithSAS view.
type sasTable struct {
	v    *sasView
	h    *tableHandle
	same bool // the handle's table is the token's: checked once
}

var _ store.TypedTable = (*sasTable)(nil)

// Name implements store.Table.
func (t *sasTable) Name() string { return t.h.name }

// read authorizes a point read; out of range is a missing entity.
func (t *sasTable) read(pk, rk string) error {
	if err := t.v.authorizeTable(t.h.name, permQuery, t.same); err != nil {
		return err
	}
	if !t.v.inRange(pk, rk) {
		return notFound(t.h.name, pk, rk)
	}
	return nil
}

// Get implements store.Table.
func (t *sasTable) Get(ctx context.Context, pk, rk string, opts *store.GetOptions) (store.Entity, error) {
	if err := t.read(pk, rk); err != nil {
		return store.Entity{}, err
	}
	return t.h.Get(ctx, pk, rk, opts)
}

// GetInto implements store.TypedTable.
func (t *sasTable) GetInto(ctx context.Context, pk, rk string, opts *store.GetOptions, r store.EntityReader) error {
	if err := t.read(pk, rk); err != nil {
		return err
	}
	return t.h.GetInto(ctx, pk, rk, opts, r)
}

// write authorizes one write of kind on (pk, rk).
func (t *sasTable) write(k store.ActionKind, pk, rk string) error {
	if err := t.v.authorizeTable(t.h.name, entityPerm(k), t.same); err != nil {
		return err
	}
	if !t.v.inRange(pk, rk) {
		return outOfRange(pk, rk)
	}
	return nil
}

// Insert implements store.Table.
func (t *sasTable) Insert(ctx context.Context, e store.Entity) (store.ETag, error) {
	if err := t.write(store.ActionInsert, e.PartitionKey, e.RowKey); err != nil {
		return "", err
	}
	return t.h.Insert(ctx, e)
}

// Update implements store.Table.
func (t *sasTable) Update(ctx context.Context, e store.Entity, mode store.UpdateMode, ifMatch store.ETag) (store.ETag, error) {
	if err := t.write(store.ActionUpdateMerge, e.PartitionKey, e.RowKey); err != nil {
		return "", err
	}
	return t.h.Update(ctx, e, mode, ifMatch)
}

// Upsert implements store.Table.
func (t *sasTable) Upsert(ctx context.Context, e store.Entity, mode store.UpdateMode) (store.ETag, error) {
	if err := t.write(store.ActionUpsertMerge, e.PartitionKey, e.RowKey); err != nil {
		return "", err
	}
	return t.h.Upsert(ctx, e, mode)
}

// Delete implements store.Table.
func (t *sasTable) Delete(ctx context.Context, pk, rk string, ifMatch store.ETag) error {
	if err := t.write(store.ActionDelete, pk, rk); err != nil {
		return err
	}
	return t.h.Delete(ctx, pk, rk, ifMatch)
}

// Write implements store.TypedTable.
func (t *sasTable) Write(ctx context.Context, a store.Action) (store.ETag, error) {
	if err := t.write(a.Kind, a.Entity.PartitionKey, a.Entity.RowKey); err != nil {
		return "", err
	}
	return t.h.Write(ctx, a)
}

// Transact implements store.Table: every action needs its own permission
// and key; the first refused one fails the transaction at its index.
func (t *sasTable) Transact(ctx context.Context, actions []store.Action) ([]store.ActionResult, error) {
	for i := range actions {
		a := &actions[i]
		if err := t.write(a.Kind, a.Entity.PartitionKey, a.Entity.RowKey); err != nil {
			return nil, store.WithIndex(err, i)
		}
	}
	return t.h.Transact(ctx, actions)
}

// scoped authorizes a query and ANDs the token's key range to its filter.
// post is set when the combined filter would break a filter limit the
// caller's own filter keeps: the range is then applied to the rows found.
func (t *sasTable) scoped(q store.Query) (store.Query, bool, error) {
	if err := t.v.authorizeTable(t.h.name, permQuery, t.same); err != nil {
		return q, false, err
	}
	if t.v.account || !t.v.p.Ranged() {
		return q, false, nil
	}
	f, err := filter.ParseQuery(q)
	if err != nil {
		return q, false, err
	}
	c := f.Cond().And(t.v.scope)
	if c.Err() != nil {
		return q, true, nil
	}
	text := c.String()
	if driver.ValidateFilterLength(text) != nil {
		return q, true, nil
	}
	q.Filter = text
	return q, false, nil
}

// Query implements store.Table.
func (t *sasTable) Query(ctx context.Context, q store.Query) (store.Page, error) {
	sq, post, err := t.scoped(q)
	if err != nil {
		return store.Page{}, err
	}
	page, err := t.h.Query(ctx, sq)
	if err != nil || !post {
		return page, err
	}
	kept := page.Entities[:0]
	for _, e := range page.Entities {
		if t.v.inRange(e.PartitionKey, e.RowKey) {
			kept = append(kept, e)
		}
	}
	page.Entities = kept
	return page, nil
}

// QueryInto implements store.TypedTable.
func (t *sasTable) QueryInto(ctx context.Context, q store.Query, next func() store.EntityReader) (string, int, error) {
	sq, post, err := t.scoped(q)
	if err != nil {
		return "", 0, err
	}
	if !post {
		return t.h.QueryInto(ctx, sq, next)
	}
	n := 0
	cont, _, err := t.h.QueryInto(ctx, sq, func() store.EntityReader {
		return &rangeReader{in: t.v.inRange, next: next, n: &n}
	})
	if err != nil {
		return "", 0, err
	}
	return cont, n, nil
}

// rangeReader hands an entity on to a reader of next only when its key
// is in range; it holds the partition key until the row key comes.
type rangeReader struct {
	in   func(pk, rk string) bool
	next func() store.EntityReader
	n    *int
	pk   string
	to   store.EntityReader // nil until the row key decided; discard when skip
	skip bool
}

func (r *rangeReader) SetPartitionKey(pk string) error { r.pk = pk; return nil }

func (r *rangeReader) SetRowKey(rk string) error {
	if !r.in(r.pk, rk) {
		r.skip = true
		return nil
	}
	r.to = r.next()
	*r.n++
	if err := r.to.SetPartitionKey(r.pk); err != nil {
		return err
	}
	return r.to.SetRowKey(rk)
}

func (r *rangeReader) pass(f func(store.EntityReader) error) error {
	if r.skip || r.to == nil {
		return nil
	}
	return f(r.to)
}

func (r *rangeReader) SetTimestamp(ts time.Time) error {
	return r.pass(func(e store.EntityReader) error { return e.SetTimestamp(ts) })
}
func (r *rangeReader) SetETag(e store.ETag) error {
	return r.pass(func(x store.EntityReader) error { return x.SetETag(e) })
}
func (r *rangeReader) SetString(n string, v string) error {
	return r.pass(func(e store.EntityReader) error { return e.SetString(n, v) })
}
func (r *rangeReader) SetBinary(n string, v []byte) error {
	return r.pass(func(e store.EntityReader) error { return e.SetBinary(n, v) })
}
func (r *rangeReader) SetBool(n string, v bool) error {
	return r.pass(func(e store.EntityReader) error { return e.SetBool(n, v) })
}
func (r *rangeReader) SetInt32(n string, v int32) error {
	return r.pass(func(e store.EntityReader) error { return e.SetInt32(n, v) })
}
func (r *rangeReader) SetInt64(n string, v int64) error {
	return r.pass(func(e store.EntityReader) error { return e.SetInt64(n, v) })
}
func (r *rangeReader) SetDouble(n string, v float64) error {
	return r.pass(func(e store.EntityReader) error { return e.SetDouble(n, v) })
}
func (r *rangeReader) SetTime(n string, v time.Time) error {
	return r.pass(func(e store.EntityReader) error { return e.SetTime(n, v) })
}
func (r *rangeReader) SetGUID(n string, v store.GUID) error {
	return r.pass(func(e store.EntityReader) error { return e.SetGUID(n, v) })
}

// deniedErr is every answer of a view's queues and containers.
func deniedErr(kind, name string) error {
	return store.Errorf(store.CodeAuthorizationFailure, 403, "%s %q: memstore enforces shared access signatures for tables only; a WithSAS view refuses queue and blob requests", kind, name)
}

type deniedQueue string

func (q deniedQueue) Name() string { return string(q) }
func (q deniedQueue) Create(context.Context) error {
	return deniedErr("queue", string(q))
}
func (q deniedQueue) Delete(context.Context) error {
	return deniedErr("queue", string(q))
}
func (q deniedQueue) Put(context.Context, []byte, *store.PutOptions) (store.Message, error) {
	return store.Message{}, deniedErr("queue", string(q))
}
func (q deniedQueue) Get(context.Context, int, time.Duration) ([]store.Message, error) {
	return nil, deniedErr("queue", string(q))
}
func (q deniedQueue) Peek(context.Context, int) ([]store.Message, error) {
	return nil, deniedErr("queue", string(q))
}
func (q deniedQueue) Update(context.Context, string, string, []byte, time.Duration) (store.Message, error) {
	return store.Message{}, deniedErr("queue", string(q))
}
func (q deniedQueue) DeleteMessage(context.Context, string, string) error {
	return deniedErr("queue", string(q))
}

type deniedContainer string

func (c deniedContainer) Name() string { return string(c) }
func (c deniedContainer) Create(context.Context) error {
	return deniedErr("container", string(c))
}
func (c deniedContainer) Delete(context.Context) error {
	return deniedErr("container", string(c))
}
func (c deniedContainer) Put(context.Context, string, []byte, *store.BlobPutOptions) (store.BlobProps, error) {
	return store.BlobProps{}, deniedErr("container", string(c))
}
func (c deniedContainer) Get(context.Context, string) ([]byte, store.BlobProps, error) {
	return nil, store.BlobProps{}, deniedErr("container", string(c))
}
func (c deniedContainer) DeleteBlob(context.Context, string, store.ETag) error {
	return deniedErr("container", string(c))
}
func (c deniedContainer) List(context.Context, store.BlobListOptions) (store.BlobPage, error) {
	return store.BlobPage{}, deniedErr("container", string(c))
}
func (c deniedContainer) CreateAppend(context.Context, string, *store.BlobPutOptions) (store.BlobProps, error) {
	return store.BlobProps{}, deniedErr("container", string(c))
}
func (c deniedContainer) AppendBlock(context.Context, string, []byte, *store.AppendOptions) (store.AppendResult, error) {
	return store.AppendResult{}, deniedErr("container", string(c))
}
func (c deniedContainer) GetRange(context.Context, string, int64, int64) ([]byte, store.BlobProps, error) {
	return nil, store.BlobProps{}, deniedErr("container", string(c))
}

// realClock reports a store reading time.Now (no WithClock).
func realClock(now func() time.Time) bool {
	return reflect.ValueOf(now).Pointer() == reflect.ValueOf(time.Now).Pointer()
}

// The states of a window.
const (
	windowBefore int32 = iota
	windowOpen
	windowClosed
)

// sasWindow is a token's time window kept by timers on the real clock, so
// that a request reads one atomic value instead of the clock (time.Now
// costs about 100 ns on a virtual machine, as much as a tenth of a point
// read). A timer fires at or just after its instant, so a request in the
// first moments after st, or after se, may take the slow path or pass:
// the slow path reads the clock and decides.
type sasWindow struct {
	state atomic.Int32
}

func newSASWindow(start, expiry time.Time) *sasWindow {
	w := &sasWindow{}
	now := time.Now()
	switch {
	case !now.Before(expiry):
		w.state.Store(windowClosed)
		return w
	case !start.IsZero() && now.Before(start):
		w.state.Store(windowBefore)
		time.AfterFunc(start.Sub(now), func() { w.state.CompareAndSwap(windowBefore, windowOpen) })
	default:
		w.state.Store(windowOpen)
	}
	time.AfterFunc(expiry.Sub(now), func() { w.state.Store(windowClosed) })
	return w
}
