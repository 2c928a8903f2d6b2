package mapper

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/internal/interleave"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// End-to-end benchmarks of the paths users call, against Azurite, each
// case interleaved with its baselines (internal/interleave). Run them with
//
//	scripts/with-azurite.sh go test -run '^$' -bench 'E2E' -benchtime 1x ./mapper/
//
// The baselines are the two programs an aztables user writes for the same
// struct: bodies from json.Marshal of an aztables.EDMEntity (the
// correctly typed path), and from json.Marshal of the struct itself (no
// annotations: Int64, DateTime and Binary land as strings). Reads decode
// aztables' answer with json.Unmarshal into an EDMEntity and copy its
// properties to the struct, or straight into the struct.

// e2eClients returns a table on Azurite through azstore and through a
// plain aztables client, as a user would build it from the connection
// string.
func e2eClients(b *testing.B, prefix string) (*Repository[benchEmployee], *aztables.Client) {
	b.Helper()
	conn := azuritetest.Conn(b)
	st, err := azstore.NewFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	if err := st.CreateTable(b.Context(), name); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.DeleteTable(context.Background(), name) })
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	return NewRepository[benchEmployee](st, name), svc.NewClient(name)
}

// e2eFast returns a repository over the same table as repo on a store
// that sends through azstore.FastTransport, the opt-in transport for
// services bound by client CPU.
func e2eFast(b *testing.B, repo *Repository[benchEmployee]) *Repository[benchEmployee] {
	b.Helper()
	st, err := azstore.NewFromConnectionString(azuritetest.Conn(b), &azstore.Options{Transport: azstore.FastTransport()})
	if err != nil {
		b.Fatal(err)
	}
	return NewRepository[benchEmployee](st, repo.Table().Name())
}

// e2eValue is benchValue with keys of operation i.
func e2eValue(prefix string, i int) benchEmployee {
	v := benchValue()
	v.Dept = fmt.Sprintf("d%02d", i%8)
	v.ID = fmt.Sprintf("%s%08d", prefix, i)
	return v
}

// edmOf is the aztables EDMEntity of v, typed as the service stores it.
func edmOf(v *benchEmployee) aztables.EDMEntity {
	return aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: v.Dept, RowKey: v.ID},
		Properties: map[string]any{
			"Name": v.Name, "Email": v.Email, "Age": v.Age, "Salary": aztables.EDMInt64(v.Salary),
			"Rating": v.Rating, "Active": v.Active, "Hired": aztables.EDMDateTime(v.Hired),
			"Photo": aztables.EDMBinary(v.Photo),
		},
	}
}

// fromEDM copies an EDMEntity's properties to the struct, as an aztables
// user must.
func fromEDM(e *aztables.EDMEntity, v *benchEmployee) error {
	*v = benchEmployee{Dept: e.PartitionKey, ID: e.RowKey}
	var ok [8]bool
	v.Name, ok[0] = e.Properties["Name"].(string)
	v.Email, ok[1] = e.Properties["Email"].(string)
	v.Age, ok[2] = e.Properties["Age"].(int32)
	var sal aztables.EDMInt64
	sal, ok[3] = e.Properties["Salary"].(aztables.EDMInt64)
	v.Salary = int64(sal)
	v.Rating, ok[4] = e.Properties["Rating"].(float64)
	v.Active, ok[5] = e.Properties["Active"].(bool)
	var hired aztables.EDMDateTime
	hired, ok[6] = e.Properties["Hired"].(aztables.EDMDateTime)
	v.Hired = time.Time(hired)
	var photo aztables.EDMBinary
	photo, ok[7] = e.Properties["Photo"].(aztables.EDMBinary)
	v.Photo = photo
	for i, o := range ok {
		if !o {
			return fmt.Errorf("property %d of %s has another type: %v", i, v.ID, e.Properties)
		}
	}
	return nil
}

func e2eReport(b *testing.B, rep interleave.Report) {
	b.Helper()
	fmt.Printf("%s\n%s\n", b.Name(), rep.Table())
	rep.Metrics(b.ReportMetric)
}

// BenchmarkE2EInsert compares Repository.Insert with the aztables
// programs that insert the same struct.
func BenchmarkE2EInsert(b *testing.B) {
	repo, c := e2eClients(b, "e2eins")
	fast := e2eFast(b, repo)
	floor := newFloorClient(b, repo.Table().Name())
	ctx := b.Context()
	rep, err := interleave.Measure(interleave.Config{Rounds: 25, Slice: 150 * time.Millisecond, CollectGarbage: true},
		interleave.Case{Name: "aztables+EDMEntity", Op: func(i int) error {
			v := e2eValue("a", i)
			body, err := json.Marshal(edmOf(&v))
			if err != nil {
				return err
			}
			_, err = c.AddEntity(ctx, body, nil)
			return err
		}},
		interleave.Case{Name: "aztables+json.Marshal", Op: func(i int) error {
			v := e2eValue("j", i)
			body, err := json.Marshal(&v)
			if err != nil {
				return err
			}
			_, err = c.AddEntity(ctx, body, nil)
			return err
		}},
		interleave.Case{Name: "Repository.Insert", Op: func(i int) error {
			v := e2eValue("r", i)
			return repo.Insert(ctx, &v)
		}},
		interleave.Case{Name: "Repository.Insert/FastTransport", Op: func(i int) error {
			v := e2eValue("s", i)
			return fast.Insert(ctx, &v)
		}},
		interleave.Case{Name: "net/http-floor", Op: func(i int) error {
			v := e2eValue("f", i)
			body, err := AppendJSON(nil, &v)
			if err != nil {
				return err
			}
			_, err = floor.do(ctx, http.MethodPost, floor.table, body, http.StatusNoContent)
			return err
		}},
		interleave.Case{Name: "raw-exchange-floor", Op: func(i int) error {
			v := e2eValue("x", i)
			body, err := AppendJSON(nil, &v)
			if err != nil {
				return err
			}
			_, err = floor.raw(http.MethodPost, floor.table, body, http.StatusNoContent)
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	e2eReport(b, rep)
}

// BenchmarkE2EGet compares Repository.Get with aztables' GetEntity
// decoded into the struct.
func BenchmarkE2EGet(b *testing.B) {
	repo, c := e2eClients(b, "e2eget")
	fast := e2eFast(b, repo)
	floor := newFloorClient(b, repo.Table().Name())
	ctx := b.Context()
	const n = 200
	for i := range n {
		v := e2eValue("g", i)
		if err := repo.Insert(ctx, &v); err != nil {
			b.Fatal(err)
		}
	}
	key := func(i int) (string, string) { v := e2eValue("g", i%n); return v.Dept, v.ID }
	rep, err := interleave.Measure(interleave.Config{Rounds: 25, Slice: 150 * time.Millisecond, CollectGarbage: true},
		interleave.Case{Name: "aztables+EDMEntity", Op: func(i int) error {
			pk, rk := key(i)
			resp, err := c.GetEntity(ctx, pk, rk, nil)
			if err != nil {
				return err
			}
			var e aztables.EDMEntity
			if err := json.Unmarshal(resp.Value, &e); err != nil {
				return err
			}
			var v benchEmployee
			return fromEDM(&e, &v)
		}},
		interleave.Case{Name: "aztables+json.Unmarshal", Op: func(i int) error {
			pk, rk := key(i)
			resp, err := c.GetEntity(ctx, pk, rk, &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)})
			if err != nil {
				return err
			}
			var v benchEmployee
			return json.Unmarshal(resp.Value, &v)
		}},
		interleave.Case{Name: "Repository.Get", Op: func(i int) error {
			pk, rk := key(i)
			_, err := repo.Get(ctx, pk, rk)
			return err
		}},
		interleave.Case{Name: "Repository.Get/FastTransport", Op: func(i int) error {
			pk, rk := key(i)
			_, err := fast.Get(ctx, pk, rk)
			return err
		}},
		interleave.Case{Name: "net/http-floor", Op: func(i int) error {
			pk, rk := key(i)
			_, err := floor.do(ctx, http.MethodGet, floor.table+"(PartitionKey='"+pk+"',RowKey='"+rk+"')", nil, http.StatusOK)
			return err
		}},
		interleave.Case{Name: "raw-exchange-floor", Op: func(i int) error {
			pk, rk := key(i)
			_, err := floor.raw(http.MethodGet, floor.table+"(PartitionKey='"+pk+"',RowKey='"+rk+"')", nil, http.StatusOK)
			return err
		}},
	)
	if err != nil {
		b.Fatal(err)
	}
	e2eReport(b, rep)
}

// BenchmarkE2EBulkOnePartition inserts 5,000 values into one partition
// per operation: Repository.BulkWrite against the two aztables programs a
// careful user writes (bodies from json.Marshal of EDMEntity, batches of
// 100): one that sends the batches one after another (ordered), and one
// that keeps 8 in flight (unordered). Figures are per entity.
func BenchmarkE2EBulkOnePartition(b *testing.B) {
	conn := azuritetest.Conn(b)
	st, err := azstore.NewFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(conn, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	const n = 5000
	// Each operation writes into a table of its own, created before its
	// slice and dropped before the next one's: Azurite's inserts slow down
	// as a partition grows (three times slower at 30,000 entities), which
	// would make later rounds measure the emulator's growth.
	run := fmt.Sprintf("%d", time.Now().UnixNano()%1e6)
	tableOf := func(prefix string, op int) string { return fmt.Sprintf("e2ebulk%s%s%d", prefix, run, op) }
	var live []string
	b.Cleanup(func() {
		for _, t := range live {
			_ = st.DeleteTable(context.Background(), t)
		}
	})
	prepare := func(prefix string) func(op int) error {
		return func(op int) error {
			if op > 0 {
				old := tableOf(prefix, op-1)
				if err := st.DeleteTable(ctx, old); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
			name := tableOf(prefix, op)
			live = append(live, name)
			return st.CreateTable(ctx, name)
		}
	}
	values := func(prefix string, op int) []*benchEmployee {
		out := make([]*benchEmployee, n)
		for i := range out {
			v := e2eValue(fmt.Sprintf("%s%04d-", prefix, op), i)
			v.Dept = prefix // one partition
			out[i] = &v
		}
		return out
	}
	batches := func(vs []*benchEmployee) ([][]aztables.TransactionAction, error) {
		var out [][]aztables.TransactionAction
		for len(vs) > 0 {
			k := min(100, len(vs))
			acts := make([]aztables.TransactionAction, k)
			for i, v := range vs[:k] {
				body, err := json.Marshal(edmOf(v))
				if err != nil {
					return nil, err
				}
				acts[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: body}
			}
			out = append(out, acts)
			vs = vs[k:]
		}
		return out, nil
	}
	ordered := interleave.Case{Name: "aztables-ordered", Ops: n, Prepare: prepare("o"), Op: func(op int) error {
		c := svc.NewClient(tableOf("o", op))
		bs, err := batches(values("o", op))
		if err != nil {
			return err
		}
		for _, acts := range bs {
			if _, err := c.SubmitTransaction(ctx, acts, nil); err != nil {
				return err
			}
		}
		return nil
	}}
	unordered := interleave.Case{Name: "aztables-unordered", Ops: n, Prepare: prepare("u"), Op: func(op int) error {
		c := svc.NewClient(tableOf("u", op))
		bs, err := batches(values("u", op))
		if err != nil {
			return err
		}
		sem := make(chan struct{}, 8)
		errs := make(chan error, len(bs))
		for _, acts := range bs {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				_, err := c.SubmitTransaction(ctx, acts, nil)
				errs <- err
			}()
		}
		for range bs {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	}}
	bulk := interleave.Case{Name: "Repository.BulkWrite", Ops: n, Prepare: prepare("b"), Op: func(op int) error {
		repo := NewRepository[benchEmployee](st, tableOf("b", op))
		_, err := repo.BulkWrite(ctx, store.ActionInsert, values("b", op), store.BulkOptions{})
		return err
	}}
	rep, err := interleave.Measure(interleave.Config{Rounds: 9, Slice: time.Millisecond, Warmup: time.Millisecond, CollectGarbage: true}, ordered, unordered, bulk)
	if err != nil {
		b.Fatal(err)
	}
	e2eReport(b, rep)
}

// floorClient sends the same requests as azstore without the SDK,
// signed by hand (Shared Key Lite), no encoding beyond AppendJSON, nothing
// decoded: with net/http alone (do), and as a raw exchange on one
// connection, written and read on the caller's goroutine (raw), which is
// the floor under any client of the service.
type floorClient struct {
	hc              *http.Client
	endpoint, table string
	account         string
	key             []byte

	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	host string
}

func newFloorClient(b *testing.B, table string) *floorClient {
	b.Helper()
	f := &floorClient{hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}, table: table}
	for _, part := range strings.Split(azuritetest.Conn(b), ";") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "TableEndpoint":
			f.endpoint = strings.TrimRight(v, "/")
		case "AccountName":
			f.account = v
		case "AccountKey":
			var err error
			if f.key, err = base64.StdEncoding.DecodeString(v); err != nil {
				b.Fatal(err)
			}
		}
	}
	return f
}

func (f *floorClient) do(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	u := f.endpoint + "/" + path
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	date, auth := f.sign(req.URL.EscapedPath())
	h := req.Header
	h["x-ms-date"] = []string{date}
	h["x-ms-version"] = []string{"2019-02-02"}
	h["DataServiceVersion"] = []string{"3.0"}
	h["Accept"] = []string{"application/json;odata=minimalmetadata"}
	h["Authorization"] = []string{auth}
	if body != nil {
		h["Content-Type"] = []string{"application/json"}
		h["Prefer"] = []string{"return-no-content"}
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, data)
	}
	return data, nil
}

// sign returns the Date and Authorization header values of a request.
func (f *floorClient) sign(escapedPath string) (date, auth string) {
	date = time.Now().UTC().Format(http.TimeFormat)
	mac := hmac.New(sha256.New, f.key)
	mac.Write([]byte(date + "\n/" + f.account + escapedPath))
	return date, "SharedKeyLite " + f.account + ":" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// raw makes the exchange on its own connection: the request written by
// hand, the answer's status line, headers and body read back (by length
// or in chunks, as Azurite sends them).
func (f *floorClient) raw(method, path string, body []byte, want int) ([]byte, error) {
	if f.conn == nil {
		u, err := url.Parse(f.endpoint)
		if err != nil {
			return nil, err
		}
		if f.conn, err = net.Dial("tcp", u.Host); err != nil {
			return nil, err
		}
		f.host = u.Host
		f.br, f.bw = bufio.NewReaderSize(f.conn, 16<<10), bufio.NewWriterSize(f.conn, 16<<10)
	}
	u, err := url.Parse(f.endpoint + "/" + path)
	if err != nil {
		return nil, err
	}
	date, auth := f.sign(u.EscapedPath())
	w := f.bw
	w.WriteString(method + " " + u.EscapedPath() + " HTTP/1.1\r\nHost: " + f.host + "\r\n")
	w.WriteString("x-ms-date: " + date + "\r\nx-ms-version: 2019-02-02\r\nDataServiceVersion: 3.0\r\nAccept: application/json;odata=minimalmetadata\r\n")
	w.WriteString("Authorization: " + auth + "\r\n")
	if body != nil {
		w.WriteString("Content-Type: application/json\r\nPrefer: return-no-content\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	if err := w.Flush(); err != nil {
		return nil, err
	}
	tp := textproto.NewReader(f.br)
	line, err := tp.ReadLine()
	if err != nil {
		return nil, err
	}
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	var data []byte
	switch {
	case h.Get("Transfer-Encoding") == "chunked":
		if data, err = io.ReadAll(httputil.NewChunkedReader(f.br)); err == nil {
			_, err = tp.ReadLine() // the end of the (empty) trailer
		}
	case h.Get("Content-Length") != "":
		var n int
		if n, err = strconv.Atoi(h.Get("Content-Length")); err == nil {
			data = make([]byte, n)
			_, err = io.ReadFull(f.br, data)
		}
	}
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "HTTP/1.1 "+strconv.Itoa(want)) {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, line, data)
	}
	return data, nil
}

// BenchmarkE2EQuery reads a partition of 1,000 values per operation:
// Repository.Query against aztables' pager with each entity decoded by
// json.Unmarshal into an EDMEntity (then copied to the struct), or
// straight into the struct, and against Repository.Query over the table
// without its typed lane (store.Entity pages decoded into the struct, the
// route before the typed page). Figures are per entity. Run it alone with
//
//	scripts/with-azurite.sh go test -run '^$' -bench E2EQuery -benchtime 1x ./mapper/
func BenchmarkE2EQuery(b *testing.B) {
	repo, c := e2eClients(b, "e2eqry")
	ctx := b.Context()
	const n = 1000
	vals := make([]*benchEmployee, n)
	for i := range vals {
		v := e2eValue("q", i)
		v.Dept = "q"
		vals[i] = &v
	}
	if _, err := repo.BulkWrite(ctx, store.ActionInsert, vals, store.BulkOptions{}); err != nil {
		b.Fatal(err)
	}
	filter := "PartitionKey eq 'q'"
	pager := func(decode func([]byte) error) func(int) error {
		return func(int) error {
			got := 0
			p := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
			for p.More() {
				page, err := p.NextPage(ctx)
				if err != nil {
					return err
				}
				for _, raw := range page.Entities {
					if err := decode(raw); err != nil {
						return err
					}
					got++
				}
			}
			if got != n {
				return fmt.Errorf("read %d, want %d", got, n)
			}
			return nil
		}
	}
	// The route before the typed page: the same repository over the table
	// without its typed lane, so each page comes back as store.Entity
	// values that are then decoded into the struct.
	plain := *repo
	plain.table, plain.typed = plainTable{repo.table}, nil
	query := func(r *Repository[benchEmployee]) func(int) error {
		return func(int) error {
			got := 0
			for _, err := range r.Query(ctx, Where[benchEmployee]("PartitionKey").Eq("q")) {
				if err != nil {
					return err
				}
				got++
			}
			if got != n {
				return fmt.Errorf("read %d, want %d", got, n)
			}
			return nil
		}
	}
	rep, err := interleave.Measure(interleave.Config{Rounds: 21, Slice: time.Millisecond, Warmup: time.Millisecond, CollectGarbage: true},
		interleave.Case{Name: "aztables+EDMEntity", Ops: n, Op: pager(func(raw []byte) error {
			var e aztables.EDMEntity
			if err := json.Unmarshal(raw, &e); err != nil {
				return err
			}
			var v benchEmployee
			return fromEDM(&e, &v)
		})},
		interleave.Case{Name: "aztables+json.Unmarshal", Ops: n, Op: pager(func(raw []byte) error {
			var v benchEmployee
			return json.Unmarshal(raw, &v)
		})},
		interleave.Case{Name: "Repository.Query/entity-route", Ops: n, Op: query(&plain)},
		interleave.Case{Name: "Repository.Query", Ops: n, Op: query(repo)},
	)
	if err != nil {
		b.Fatal(err)
	}
	e2eReport(b, rep)
}
