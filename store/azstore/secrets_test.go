package azstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	azlog "github.com/Azure/azure-sdk-for-go/sdk/azcore/log"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/tablekit/tablekit/store"
)

// TestNoSecretInLogsOrErrors turns azcore's log listener on (every event
// class) and drives requests that fail every way a secret used to leak:
// a SAS store against a server answering 500 and 404, then against a
// closed port (retries of transport errors printed the request URL with
// its signature, dozens of lines per call), and a shared-key store with
// the same. No log line and no error may carry the SAS signature or the
// account key.
func TestNoSecretInLogsOrErrors(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	azlog.SetListener(func(ev azlog.Event, msg string) {
		mu.Lock()
		lines = append(lines, string(ev)+": "+msg)
		mu.Unlock()
	})
	defer azlog.SetListener(nil)

	f := newFake(t, false, func(w http.ResponseWriter, r *http.Request, n int) {
		if n%2 == 0 {
			odataError(w, 500, store.CodeInternalError, "oops")
			return
		}
		odataError(w, 404, store.CodeResourceNotFound, "missing")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	fast := &Options{Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond}, Services: allServices()}
	const sig = "sig=topsecretsignature"
	var errs []error
	for _, base := range []string{f.srv.URL, closed} {
		sas, err := NewFromSASURL(Endpoints{
			Table: base + "/acct?sv=2020&" + sig,
			Queue: base + "/acct?sv=2020&" + sig,
			Blob:  base + "/acct?sv=2020&" + sig,
		}, fast)
		if err != nil {
			t.Fatal(err)
		}
		key, err := NewWithSharedKey("acct", secretKey, Endpoints{Table: base + "/acct", Queue: base + "/acct", Blob: base + "/acct"}, fast)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []*Store{sas, key} {
			ctx := context.Background()
			tbl := st.Table("tbl")
			_, err1 := tbl.Get(ctx, "p", "r", nil)
			_, err2 := tbl.Insert(ctx, entity("p", "r"))
			_, err3 := tbl.Upsert(ctx, entity("p", "r"), store.Merge)
			_, err4 := tbl.Query(ctx, store.Query{Filter: "PartitionKey eq 'p'"})
			_, err5 := st.Queue("q1").Put(ctx, []byte("m"), nil)
			_, _, err6 := st.Container("c1").Get(ctx, "b")
			err7 := st.CreateTable(ctx, "tbl")
			errs = append(errs, err1, err2, err3, err4, err5, err6, err7)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) == 0 {
		t.Fatal("the log listener saw nothing: the test is not observing azcore's logs")
	}
	secrets := []string{"topsecretsignature", secretKey, "c2VjcmV0"}
	leaks := 0
	for _, l := range lines {
		for _, s := range secrets {
			if strings.Contains(l, s) {
				leaks++
				if leaks < 5 {
					t.Errorf("log line leaks a secret: %s", l)
				}
			}
		}
	}
	for _, err := range errs {
		if err == nil {
			t.Fatal("an operation against a failing server succeeded")
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) || strings.Contains(fmt.Sprintf("%+v", err), s) {
				t.Errorf("error leaks a secret: %v", err)
			}
		}
	}
	t.Logf("%d log lines and %d errors scanned, %d leaks", len(lines), len(errs), leaks)
}

// TestRedactedErrorsKeepTheirCause: the redaction keeps errors.As and
// errors.Is working on the transport's error.
func TestRedactedErrorsKeepTheirCause(t *testing.T) {
	st, err := NewFromSASURL(Endpoints{Table: "http://127.0.0.1:1/acct?sig=topsecret"}, &Options{Retry: policy.RetryOptions{MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Table("tbl").Get(context.Background(), "p", "r", nil)
	var op *net.OpError
	if !errors.As(err, &op) || strings.Contains(err.Error(), "topsecret") {
		t.Fatalf("got %v: want a *net.OpError inside and no signature in the text", err)
	}
}
