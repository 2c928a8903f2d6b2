// Package azbase holds what the Azure backend's packages share: error
// classification, the transport wrapper, retry policies, and the contract
// by which the queue and blob packages attach to a store.
package azbase

import (
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/tablekit/tablekit/store"
)

// Service adds a storage service (queues or blobs) to a store. The
// packages store/azstore/azqueues and store/azstore/azblobs provide one
// each, so that a program links the SDK module of a service only when it
// asks for it.
type Service interface {
	// Attach connects the service for the account the attachment
	// describes and installs its handles. It is called once, when the
	// store is built.
	Attach(a *Attachment) error
}

// Attachment is what a Service gets from the store: the account's
// endpoint and credential, the client options every request of the store
// goes through, and the slots for its handles.
type Attachment struct {
	// Endpoints are the service URLs by service name ("queue", "blob"); a
	// URL may carry a SAS.
	Endpoints map[string]string
	// AccountName and AccountKey are set for a shared-key store.
	AccountName, AccountKey string
	// Token is set for a store built with a token credential.
	Token azcore.TokenCredential
	// Options are the azcore client options (transport wrapper, retries).
	Options azcore.ClientOptions
	// BlobTryTimeout is the per-try timeout of blob requests, which
	// replaces Options.Retry.TryTimeout for them (0: none).
	BlobTryTimeout time.Duration

	// Queues and Containers receive the handle constructors.
	Queues     func(name string) store.Queue
	Containers func(name string) store.Container
}

// ErrNoEndpoint reports a service the store has no endpoint for.
func ErrNoEndpoint(service string) error {
	e := store.Errorf(store.CodeInvalidInput, 400, "azstore: this store has no %s endpoint: pass one in Endpoints or the connection string", service)
	e.Source = store.SourceClient
	return e
}
