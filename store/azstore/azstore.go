// Package azstore is tablekit's Azure backend: a store.Store over the
// official SDK modules, aztables for tables, authenticated by a connection
// string, a shared key, a SAS or any azcore.TokenCredential (azidentity's
// DefaultAzureCredential and friends). It works unchanged against Azure
// Storage and Azurite.
//
// Queues and blobs are services of their own, in the packages
// store/azstore/azqueues and store/azstore/azblobs, added to a store with
// Options.Services; a program that uses only tables links neither the
// azqueue nor the azblob module (nor their dependencies):
//
//	st, err := azstore.NewFromConnectionString(conn, &azstore.Options{
//		Services: []azstore.Service{azqueues.Service(), azblobs.Service()},
//	})
//
// Every call validates its input with store's rules before any request is
// sent, so Azure, Azurite and memstore refuse the same bad input with the
// same *store.Error; service failures come back as *store.Error with the
// service's own code and status. Entities travel in store/wire's JSON
// format and read back as exactly the Go types memstore returns.
//
// See docs/azure.md for construction, retries and where Azurite differs.
package azstore

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/tracing"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
	"github.com/tablekit/tablekit/store/driver"
)

// Endpoints are the service URLs of one storage account, such as
// https://myaccount.table.core.windows.net. A URL may carry a SAS query
// (NewFromSASURL). An empty URL leaves that service unavailable: its
// operations fail with an error naming the missing endpoint.
type Endpoints struct {
	// Table is the Table service URL.
	Table string
	// Queue is the Queue service URL.
	Queue string
	// Blob is the Blob service URL.
	Blob string
}

// AccountEndpoints returns the public-cloud HTTPS endpoints of an account.
func AccountEndpoints(accountName string) Endpoints {
	return Endpoints{
		Table: "https://" + accountName + ".table.core.windows.net",
		Queue: "https://" + accountName + ".queue.core.windows.net",
		Blob:  "https://" + accountName + ".blob.core.windows.net",
	}
}

// Options tune a Store. The zero value (or nil) is a good default.
type Options struct {
	// Retry configures azcore's retry policy for requests that are safe to
	// repeat. Zero fields take tablekit's defaults: 4 retries, exponential
	// backoff from 500 ms up to 30 s, on 408, 500, 502, 503 and 504 and on
	// transport errors, each try of a request abandoned after 60 s without
	// an answer (TryTimeout; negative for none). MaxRetries -1 disables
	// retries. Writes that are not idempotent are retried only when the
	// service refused them without doing any work; one whose try was
	// abandoned is settled as any lost answer (see docs/azure.md).
	Retry policy.RetryOptions
	// Transport replaces the HTTP client (a proxy, a test server). Nil
	// takes net/http, set up as azcore sets it up with 64 idle
	// connections per host, shared by every store of the process.
	// FastTransport() is azstore's own HTTP/1.1 transport, an option for
	// services bound by client CPU (docs/azure.md, "The HTTP transport").
	Transport policy.Transporter
	// BlobTryTimeout bounds each try of a blob request, as
	// Retry.TryTimeout bounds each try of a table or queue request: 0
	// takes the default (10 minutes; Retry.TryTimeout's is 60 seconds),
	// a negative value sets none. A write whose try is abandoned has an
	// unknown outcome and is settled as for any lost answer.
	BlobTryTimeout time.Duration
	// InsecureAllowCredentialWithHTTP lets a token credential be sent over
	// plain HTTP, for local emulators only.
	InsecureAllowCredentialWithHTTP bool
	// Services adds the account's other services: azqueues.Service() for
	// queues, azblobs.Service() for blobs. Without them the store's Queue
	// and Container handles fail with an error saying how to add them.
	Services []Service
	// PerRetryPolicies run in azcore's pipeline on each try of every
	// request, retries included, after azstore's own.
	PerRetryPolicies []policy.Policy
	// TracingProvider, when set, makes azcore trace each HTTP request as
	// a span, a child of the span in the request's context (store/tkotel's
	// AzureProvider adapts an OpenTelemetry TracerProvider). Nil traces
	// nothing.
	TracingProvider tracing.Provider
}

// FastTransport returns azstore's own HTTP/1.1 transport, for
// Options.Transport. It makes each exchange on the caller's goroutine over
// pooled keep-alive connections and hands requests that go through a
// proxy to net/http; against a local emulator it takes 30-40% off the
// client CPU of a small insert or point read and changes nothing else
// measurable (docs/PERFORMANCE.md). net/http, the default, is the
// hardened choice; take this one only where client CPU is the bound. One
// is shared by every store of the process.
func FastTransport() policy.Transporter { return azbase.FastTransport() }

// Service adds a storage service (queues or blobs) to a Store; the
// packages store/azstore/azqueues and store/azstore/azblobs provide them.
type Service = azbase.Service

// Store is a storage account: it implements store.Store. It is safe for
// concurrent use.
type Store struct {
	tables *aztables.ServiceClient
	// queues and containers open handles of the attached services; nil
	// without them.
	queues     func(name string) store.Queue
	containers func(name string) store.Container
	// writeRetry is the retry policy of non-idempotent writes.
	writeRetry policy.RetryOptions
	// filterRetry is the policy of a filtered query's first try: it does
	// not repeat a 500, which Azurite answers to some valid filters.
	filterRetry policy.RetryOptions
	// emulator is set for a loopback or devstoreaccount1 table endpoint:
	// it enables the Azurite corrections of tablecase.go.
	emulator bool
	// tableURL is the table endpoint without its query (a SAS), for the
	// sub-request URLs of a transaction's body.
	tableURL string
}

var _ store.Store = (*Store)(nil)

func clientOptions(o *Options) azcore.ClientOptions {
	if o == nil {
		co := azbase.ClientOptions(nil, policy.RetryOptions{}, false)
		co.PerRetryPolicies = []policy.Policy{tryPolicy{}}
		return co
	}
	co := azbase.ClientOptions(o.Transport, o.Retry, o.InsecureAllowCredentialWithHTTP)
	co.PerRetryPolicies = append([]policy.Policy{tryPolicy{}}, o.PerRetryPolicies...)
	co.TracingProvider = o.TracingProvider
	return co
}

// tryPolicy reports each try of a request to the instrumentation of its
// context (driver.ReportTry): the answer's status, or 0 for none.
type tryPolicy struct{}

func (tryPolicy) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	status := 0
	if err == nil && resp != nil {
		status = resp.StatusCode
	}
	driver.ReportTry(req.Raw().Context(), status)
	return resp, err
}

// tableOptions adds the request rewrites of policy.go.
func tableOptions(o *Options) *aztables.ClientOptions {
	co := clientOptions(o)
	co.PerCallPolicies = append(co.PerCallPolicies, tablePolicy{})
	return &aztables.ClientOptions{ClientOptions: co}
}

func newStore(o *Options) *Store {
	co := clientOptions(o)
	wr := azbase.WriteRetry(co)
	fr := co.Retry
	fr.ShouldRetry = func(resp *http.Response, err error) bool {
		if err != nil {
			return !azbase.PermanentDialError(err)
		}
		switch resp.StatusCode {
		case http.StatusRequestTimeout, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return &Store{writeRetry: wr, filterRetry: fr}
}

// errNoEndpoint reports a service the store was built without.
func errNoEndpoint(service string) error { return azbase.ErrNoEndpoint(service) }

// attach connects the services opts asks for.
func (s *Store) attach(opts *Options, urls Endpoints, name, key string, token azcore.TokenCredential) error {
	if opts == nil || len(opts.Services) == 0 {
		return nil
	}
	a := &azbase.Attachment{
		Endpoints:   map[string]string{"queue": urls.Queue, "blob": urls.Blob},
		AccountName: name, AccountKey: key, Token: token,
		Options:        clientOptions(opts),
		BlobTryTimeout: azbase.TryTimeout(opts.BlobTryTimeout, azbase.DefaultBlobTryTimeout),
	}
	for _, svc := range opts.Services {
		if svc == nil {
			return errors.New("azstore: Options.Services holds a nil Service")
		}
		if err := svc.Attach(a); err != nil {
			return err
		}
	}
	s.queues, s.containers = a.Queues, a.Containers
	return nil
}

var errNoCredential = errors.New("azstore: credential is nil")

// NewWithSharedKey returns a store authenticated with the account's
// shared key. The key never appears in an error or a log.
func NewWithSharedKey(accountName, accountKey string, urls Endpoints, opts *Options) (*Store, error) {
	if err := validAccountName(accountName); err != nil {
		return nil, err
	}
	s := newStore(opts)
	var err error
	s.emulator = isEmulator(urls.Table)
	s.tableURL = endpointBase(urls.Table)
	cred, cerr := aztables.NewSharedKeyCredential(accountName, accountKey)
	if cerr != nil {
		return nil, errors.New("azstore: the account key is not valid base64")
	}
	if urls.Table != "" {
		if s.tables, err = aztables.NewServiceClientWithSharedKey(urls.Table, cred, tableOptions(opts)); err != nil {
			return nil, endpointErr("table", err)
		}
	}
	if err := s.attach(opts, urls, accountName, accountKey, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// NewWithTokenCredential returns a store authenticated with Microsoft
// Entra ID through any azcore.TokenCredential, typically
// azidentity.NewDefaultAzureCredential(nil). Use AccountEndpoints for an
// account's public endpoints. The identity needs the Storage Table Data
// Contributor, Storage Queue Data Contributor and Storage Blob Data
// Contributor roles for the services it uses.
func NewWithTokenCredential(urls Endpoints, cred azcore.TokenCredential, opts *Options) (*Store, error) {
	if cred == nil {
		return nil, errNoCredential
	}
	s := newStore(opts)
	var err error
	s.emulator = isEmulator(urls.Table)
	s.tableURL = endpointBase(urls.Table)
	if urls.Table != "" {
		if s.tables, err = aztables.NewServiceClient(urls.Table, cred, tableOptions(opts)); err != nil {
			return nil, endpointErr("table", err)
		}
	}
	if err := s.attach(opts, urls, "", "", cred); err != nil {
		return nil, err
	}
	return s, nil
}

// NewFromSASURL returns a store whose endpoint URLs each carry a shared
// access signature in their query (an account SAS may be the same for
// all three).
func NewFromSASURL(urls Endpoints, opts *Options) (*Store, error) {
	s := newStore(opts)
	var err error
	s.emulator = isEmulator(urls.Table)
	s.tableURL = endpointBase(urls.Table)
	if urls.Table != "" {
		if s.tables, err = aztables.NewServiceClientWithNoCredential(urls.Table, tableOptions(opts)); err != nil {
			return nil, endpointErr("table", err)
		}
	}
	if err := s.attach(opts, urls, "", "", nil); err != nil {
		return nil, err
	}
	return s, nil
}

// endpointBase returns a service URL without its query and trailing slash.
func endpointBase(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		u = u[:i]
	}
	return strings.TrimRight(u, "/")
}

// validAccountName checks a storage account name: 3 to 24 lowercase
// letters and digits, as Azure requires. The name is not echoed: a name
// and key swapped by mistake would otherwise print the key.
func validAccountName(name string) error {
	if name == "" {
		return errors.New("azstore: the account name is empty")
	}
	ok := len(name) >= 3 && len(name) <= 24
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
	}
	if !ok {
		return errors.New("azstore: the account name (AccountName) is not a storage account name: it must be 3 to 24 lowercase letters and digits (the value is not shown: it may be a key given in the wrong place)")
	}
	return nil
}

// endpointErr describes a bad endpoint without echoing the URL, which may
// hold a SAS.
func endpointErr(service string, err error) error {
	_ = err
	return errors.New("azstore: the " + service + " endpoint is not a valid URL")
}

// Queue implements store.Store: a queue of the attached queue service
// (azqueues), or a handle whose every call explains how to attach one.
func (s *Store) Queue(name string) store.Queue {
	if s.queues == nil {
		return missingQueue(name)
	}
	return s.queues(name)
}

// Container implements store.Store: a container of the attached blob
// service (azblobs), or a handle whose every call explains how to attach
// one.
func (s *Store) Container(name string) store.Container {
	if s.containers == nil {
		return missingContainer(name)
	}
	return s.containers(name)
}
