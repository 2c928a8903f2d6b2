// Package azstore is tablekit's Azure backend: a store.Store over the
// official SDK modules, aztables for tables, azqueue for queues and azblob
// for blobs, authenticated by a connection string, a shared key, a SAS or
// any azcore.TokenCredential (azidentity's DefaultAzureCredential and
// friends). It works unchanged against Azure Storage and Azurite.
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
	"slices"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablekit/tablekit/store"
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
	// transport errors. MaxRetries -1 disables retries. Writes that are not idempotent are retried only
	// when the service refused them without doing any work (see
	// docs/azure.md).
	Retry policy.RetryOptions
	// Transport replaces the HTTP client (a proxy, a test server).
	Transport policy.Transporter
	// InsecureAllowCredentialWithHTTP lets a token credential be sent over
	// plain HTTP, for local emulators only.
	InsecureAllowCredentialWithHTTP bool
}

// Store is a storage account: it implements store.Store. It is safe for
// concurrent use.
type Store struct {
	tables *aztables.ServiceClient
	queues *azqueue.ServiceClient
	blobs  *azblob.Client
	// writeRetry is the retry policy of non-idempotent writes.
	writeRetry policy.RetryOptions
	// filterRetry is the policy of a filtered query's first try: it does
	// not repeat a 500, which Azurite answers to some valid filters.
	filterRetry policy.RetryOptions
	// emulator is set for a loopback or devstoreaccount1 table endpoint:
	// it enables the Azurite corrections of tablecase.go.
	emulator bool
}

var _ store.Store = (*Store)(nil)

// defaultRetry fills zero fields of r with tablekit's defaults.
func defaultRetry(r policy.RetryOptions) policy.RetryOptions {
	if r.MaxRetries == 0 {
		r.MaxRetries = 4
	}
	if r.RetryDelay == 0 {
		r.RetryDelay = 500 * time.Millisecond
	}
	if r.MaxRetryDelay == 0 {
		r.MaxRetryDelay = 30 * time.Second
	}
	if r.StatusCodes == nil {
		r.StatusCodes = []int{http.StatusRequestTimeout, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	}
	return r
}

// refusedOnly retries a request only when the service certainly did not
// act on it: a 503 ServerBusy (throttled before any work) or a connection
// that was never established (and might be, soon). A lost response, a 500
// OperationTimedOut or a reset connection may hide a write that was
// applied, so those are returned to the caller instead of replayed.
func refusedOnly(resp *http.Response, err error) bool {
	if err != nil {
		return isDialError(err) && !permanentDialError(err)
	}
	return resp.StatusCode == http.StatusServiceUnavailable
}

// retryable is the retry rule of requests that are safe to repeat: the
// configured statuses, and transport errors other than a refused
// connection or an unknown host, which fail fast instead of after the
// whole backoff schedule.
func retryable(statuses []int) func(*http.Response, error) bool {
	return func(resp *http.Response, err error) bool {
		if err != nil {
			return !permanentDialError(err)
		}
		return slices.Contains(statuses, resp.StatusCode)
	}
}

func clientOptions(o *Options) azcore.ClientOptions {
	var co azcore.ClientOptions
	var next policy.Transporter = defaultHTTPClient()
	if o != nil {
		if o.Transport != nil {
			next = o.Transport
		}
		co.Retry = o.Retry
		co.InsecureAllowCredentialWithHTTP = o.InsecureAllowCredentialWithHTTP
	}
	co.Transport = transport{next: next}
	co.Retry = defaultRetry(co.Retry)
	if co.Retry.ShouldRetry == nil {
		co.Retry.ShouldRetry = retryable(co.Retry.StatusCodes)
	}
	return co
}

// tableOptions and queueOptions add the request rewrites of policy.go.
func tableOptions(o *Options) *aztables.ClientOptions {
	co := clientOptions(o)
	co.PerCallPolicies = append(co.PerCallPolicies, tablePolicy{})
	return &aztables.ClientOptions{ClientOptions: co}
}

func queueOptions(o *Options) *azqueue.ClientOptions {
	co := clientOptions(o)
	co.PerCallPolicies = append(co.PerCallPolicies, queuePolicy{})
	return &azqueue.ClientOptions{ClientOptions: co}
}

func newStore(o *Options) *Store {
	wr := clientOptions(o).Retry
	fr := wr
	wr.ShouldRetry = refusedOnly
	fr.ShouldRetry = func(resp *http.Response, err error) bool {
		if err != nil {
			return !permanentDialError(err)
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
func errNoEndpoint(service string) error {
	return &store.Error{Code: store.CodeInvalidInput, Status: 400, Index: -1,
		Message: "azstore: this store has no " + service + " endpoint: pass one in Endpoints or the connection string"}
}

var errNoCredential = errors.New("azstore: credential is nil")

// NewWithSharedKey returns a store authenticated with the account's
// shared key. The key never appears in an error or a log.
func NewWithSharedKey(accountName, accountKey string, urls Endpoints, opts *Options) (*Store, error) {
	if err := validAccountName(accountName); err != nil {
		return nil, err
	}
	s := newStore(opts)
	co := clientOptions(opts)
	var err error
	s.emulator = isEmulator(urls.Table)
	if urls.Table != "" {
		cred, cerr := aztables.NewSharedKeyCredential(accountName, accountKey)
		if cerr != nil {
			return nil, errors.New("azstore: the account key is not valid base64")
		}
		if s.tables, err = aztables.NewServiceClientWithSharedKey(urls.Table, cred, tableOptions(opts)); err != nil {
			return nil, endpointErr("table", err)
		}
	}
	if urls.Queue != "" {
		cred, cerr := azqueue.NewSharedKeyCredential(accountName, accountKey)
		if cerr != nil {
			return nil, errors.New("azstore: the account key is not valid base64")
		}
		if s.queues, err = azqueue.NewServiceClientWithSharedKeyCredential(urls.Queue, cred, queueOptions(opts)); err != nil {
			return nil, endpointErr("queue", err)
		}
	}
	if urls.Blob != "" {
		cred, cerr := azblob.NewSharedKeyCredential(accountName, accountKey)
		if cerr != nil {
			return nil, errors.New("azstore: the account key is not valid base64")
		}
		if s.blobs, err = azblob.NewClientWithSharedKeyCredential(urls.Blob, cred, &azblob.ClientOptions{ClientOptions: co}); err != nil {
			return nil, endpointErr("blob", err)
		}
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
	co := clientOptions(opts)
	var err error
	s.emulator = isEmulator(urls.Table)
	if urls.Table != "" {
		if s.tables, err = aztables.NewServiceClient(urls.Table, cred, tableOptions(opts)); err != nil {
			return nil, endpointErr("table", err)
		}
	}
	if urls.Queue != "" {
		if s.queues, err = azqueue.NewServiceClient(urls.Queue, cred, queueOptions(opts)); err != nil {
			return nil, endpointErr("queue", err)
		}
	}
	if urls.Blob != "" {
		if s.blobs, err = azblob.NewClient(urls.Blob, cred, &azblob.ClientOptions{ClientOptions: co}); err != nil {
			return nil, endpointErr("blob", err)
		}
	}
	return s, nil
}

// NewFromSASURL returns a store whose endpoint URLs each carry a shared
// access signature in their query (an account SAS may be the same for
// all three).
func NewFromSASURL(urls Endpoints, opts *Options) (*Store, error) {
	s := newStore(opts)
	co := clientOptions(opts)
	var err error
	s.emulator = isEmulator(urls.Table)
	if urls.Table != "" {
		if s.tables, err = aztables.NewServiceClientWithNoCredential(urls.Table, tableOptions(opts)); err != nil {
			return nil, endpointErr("table", err)
		}
	}
	if urls.Queue != "" {
		if s.queues, err = azqueue.NewServiceClientWithNoCredential(urls.Queue, queueOptions(opts)); err != nil {
			return nil, endpointErr("queue", err)
		}
	}
	if urls.Blob != "" {
		if s.blobs, err = azblob.NewClientWithNoCredential(urls.Blob, &azblob.ClientOptions{ClientOptions: co}); err != nil {
			return nil, endpointErr("blob", err)
		}
	}
	return s, nil
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
