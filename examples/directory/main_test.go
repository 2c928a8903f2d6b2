package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablekit/tablekit/examples/internal/backend"
	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/model"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/azblobs"
	"github.com/tablekit/tablekit/store/azstore/azqueues"
)

func TestDirectoryMemstore(t *testing.T) { testDirectory(t, memstore.New()) }

func TestDirectoryAzurite(t *testing.T) {
	st, name, err := backend.Open(azuritetest.Conn(t), azqueues.Service(), azblobs.Service())
	if err != nil || !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("open: %v (%s)", err, name)
	}
	testDirectory(t, st)
}

// client calls the service and decodes its answers.
type client struct {
	t   *testing.T
	url string
}

func (c client) do(method, path, body string, out any) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return res.StatusCode, string(b)
}

// want calls and fails the test unless the status is status.
func (c client) want(status int, method, path, body string, out any) string {
	c.t.Helper()
	got, b := c.do(method, path, body, out)
	if got != status {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, got, b, status)
	}
	return b
}

// blobs lists the photos in the container (a move leaves an empty
// marker beside the blob it carried, for the model's sweep).
func blobs(t *testing.T, s *Storage) []string {
	t.Helper()
	page, err := s.photos.List(context.Background(), store.BlobListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range page.Blobs {
		if !strings.HasSuffix(b.Name, ".moved") {
			out = append(out, b.Name)
		}
	}
	return out
}

// eventually retries check until it holds (the worker's copies).
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if check() {
			return
		}
	}
	t.Fatalf("%s never happened", what)
}

func testDirectory(t *testing.T, st store.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	prefix := fmt.Sprintf("Dir%d", time.Now().UnixNano()%1_000_000_000)
	var mu sync.Mutex
	var reported []string
	s, err := Open(ctx, st, prefix, &model.RunOptions{SweepEvery: time.Second, MeasureEvery: 20 * time.Millisecond,
		OnError: func(job string, err error) { mu.Lock(); reported = append(reported, job+": "+err.Error()); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Runner.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		s.Drop(context.Background())
	})
	srv := httptest.NewServer(Handler(s))
	defer srv.Close()
	c := client{t, srv.URL}

	c.want(201, "POST", "/departments", `{"id":"sales","title":"Sales"}`, nil)
	ann := `{"dept":"sales","id":"e1","email":"ann@contoso.com","firstName":"Ann","lastName":"Jones","phone":"555-0101","manages":"sales"}`
	c.want(201, "POST", "/employees", ann, nil)
	// Read-your-writes: found by email and last name before any worker ran.
	var e Employee
	c.want(200, "GET", "/employees?email=ann@contoso.com", "", &e)
	if e.ID != "e1" || e.Dept != "sales" {
		t.Fatalf("by email: %+v", e)
	}
	c.want(201, "POST", "/employees", `{"dept":"ops","id":"e2","email":"bob@contoso.com","firstName":"Bob","lastName":"Jones"}`, nil)
	var all []Employee
	c.want(200, "GET", "/employees?lastName=Jones", "", &all)
	if len(all) != 2 {
		t.Fatalf("by last name across departments: %+v", all)
	}
	// A duplicate email, in another department: 409.
	if b := c.want(409, "POST", "/employees", `{"dept":"ops","id":"e3","email":"ann@contoso.com","lastName":"Lee"}`, nil); !strings.Contains(b, "email") {
		t.Fatalf("duplicate email: %s", b)
	}
	// Bad input: 400 with a message.
	for body, msg := range map[string]string{
		`{"dept":"ops","id":"e4","email":"nope","lastName":"Lee"}`:          "email",
		`{"dept":"ops","email":"x@y.z","lastName":"Lee"}`:                   "dept and an id",
		`{"dept":"ops","id":"e4","email":"x@y.z"`:                           "bad JSON",
		`{"dept":"ops","id":"a/b","email":"x@y.z","lastName":"Lee"}`:        "RowKey",
		`{"dept":"ops","id":"e4","email":"x@y.z","lastName":"Lee","age":3}`: "unknown field",
	} {
		if b := c.want(400, "POST", "/employees", body, nil); !strings.Contains(b, msg) {
			t.Fatalf("%s: %s, want a message about %q", body, b, msg)
		}
	}
	c.want(400, "GET", "/employees", "", nil)
	c.want(404, "GET", "/employees?email=nobody@contoso.com", "", nil)
	// The manager's copy on the department, kept by the worker.
	var d Department
	eventually(t, "the manager's copy", func() bool {
		c.want(200, "GET", "/departments/sales", "", &d)
		return d.FirstName == "Ann" && d.Phone == "555-0101"
	})
	// The department's manager, read through the copy's source.
	var m Employee
	c.want(200, "GET", "/departments/sales/manager", "", &m)
	if m.ID != "e1" || m.Email != "ann@contoso.com" {
		t.Fatalf("the manager of sales: %+v", m)
	}
	c.want(404, "GET", "/departments/ops/manager", "", nil) // no such department row
	c.want(200, "PATCH", "/employees/sales/e1", `{"phone":"555-0199"}`, &e)
	eventually(t, "the new phone on the department", func() bool {
		c.want(200, "GET", "/departments/sales", "", &d)
		return d.Phone == "555-0199"
	})
	// The photo.
	photo := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 1<<20) // 4 MiB
	c.want(204, "PUT", "/employees/sales/e1/photo", string(photo), nil)
	if got := c.want(200, "GET", "/employees/sales/e1/photo", "", nil); got != string(photo) {
		t.Fatalf("photo: %d bytes back, want %d", len(got), len(photo))
	}
	if b := c.want(400, "PUT", "/employees/sales/e1/photo", string(make([]byte, MaxPhoto+1)), nil); !strings.Contains(b, "at most") {
		t.Fatalf("a photo over 5 MB: %s", b)
	}
	c.want(404, "PUT", "/employees/sales/nobody/photo", "x", nil)
	c.want(404, "GET", "/employees/ops/e2/photo", "", nil) // none
	// The photo is in a blob; the row, its copies and the log hold its
	// reference or nothing, never the bytes; a PATCH (a Merge) keeps it.
	c.want(200, "PATCH", "/employees/sales/e1", `{"firstName":"Anne"}`, &e)
	if got := c.want(200, "GET", "/employees/sales/e1/photo", "", nil); got != string(photo) {
		t.Fatalf("photo after a PATCH: %d bytes back, want %d", len(got), len(photo))
	}
	photo2 := bytes.Repeat([]byte("GIF89a"), 1000)
	c.want(204, "PUT", "/employees/sales/e1/photo", string(photo2), nil)
	if got := c.want(200, "GET", "/employees/sales/e1/photo", "", nil); got != string(photo2) {
		t.Fatalf("the new photo: %d bytes back, want %d", len(got), len(photo2))
	}
	// The old photo's blob goes once the worker ran: one blob left.
	eventually(t, "the old photo's blob removed", func() bool { return len(blobs(t, s)) == 1 })
	// The log, newest first.
	var log []entry
	c.want(200, "GET", "/employees/sales/e1/log", "", &log)
	if len(log) != 5 || log[0].Op != "update" || log[4].Op != "insert" || log[0].Employee.Phone != "555-0199" || log[0].Employee.FirstName != "Anne" {
		t.Fatalf("log: %+v", log)
	}
	c.want(400, "GET", "/employees/sales/e1/log?n=zero", "", nil)
	// Archive: moved out of the directory, with its log.
	c.want(202, "POST", "/employees/sales/e1/archive", "", nil)
	eventually(t, "the arrival in the archive", func() bool {
		code, _ := c.do("GET", "/archive/sales/e1", "", &e)
		return code == 200
	})
	c.want(404, "GET", "/employees/sales/e1", "", nil)
	c.want(404, "GET", "/employees?email=ann@contoso.com", "", nil)
	c.want(200, "GET", "/employees?lastName=Jones", "", &all)
	if len(all) != 1 || all[0].ID != "e2" {
		t.Fatalf("by last name after the archive: %+v", all)
	}
	c.want(200, "GET", "/employees/sales/e1/log", "", &log)
	if len(log) != 6 || log[0].Op != "move" || log[1].Op != "update" {
		t.Fatalf("log after the archive: %+v", log)
	}
	// The photo moved with the employee: the same blob, read in the archive.
	if b, err := s.Archive.ReadBlob(ctx, "sales", "e1", "photo"); err != nil || !bytes.Equal(b, photo2) || len(blobs(t, s)) != 1 {
		t.Fatalf("the archived photo: %d bytes, %v; blobs %v", len(b), err, blobs(t, s))
	}
	c.want(404, "GET", "/departments/sales/manager", "", nil) // archived: no longer its source
	eventually(t, "the manager's copy removed", func() bool {
		d = Department{}
		c.want(200, "GET", "/departments/sales", "", &d)
		return d.FirstName == "" && d.Title == "Sales"
	})
	c.want(404, "POST", "/employees/sales/e1/archive", "", nil) // not in the directory any more
	// The email is free again.
	c.want(201, "POST", "/employees", `{"dept":"ops","id":"e5","email":"ann@contoso.com","lastName":"Smith"}`, nil)

	// The background work's health: the worker, a sweep of each table, the
	// backlog measure, nothing failing, and nothing left once the worker
	// caught up.
	var h health
	eventually(t, "an empty backlog", func() bool {
		c.want(200, "GET", "/health", "", &h)
		return h.Backlog.Pending == 0 && !h.Backlog.At.IsZero()
	})
	var names []string
	for _, j := range h.Jobs {
		names = append(names, j.Name)
		if j.Errors != 0 {
			t.Errorf("job %s: %d errors, the last %s", j.Name, j.Errors, j.LastError)
		}
	}
	ops := strings.ToLower(prefix) + "-ops"
	if got, want := strings.Join(names, " "), ops+"/worker "+ops+"/sweep/"+prefix+"Staff "+ops+"/sweep/"+prefix+"Archive "+ops+"/backlog "+
		"model/"+prefix+"Staff/blobs model/"+prefix+"Staff/claims model/"+prefix+"Archive/blobs"; got != want {
		t.Fatalf("jobs %q, want %q", got, want)
	}
	if len(h.Failing) != 0 || h.Backlog.Poisoned != 0 {
		t.Fatalf("health: %+v", h)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 0 {
		t.Fatalf("errors reported to the hook: %v", reported)
	}
}
