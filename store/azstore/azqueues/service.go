// Package azqueues adds the Queue service to an azstore.Store, on the
// official azqueue module: a program that does not import this package
// does not link it.
//
//	st, err := azstore.NewFromConnectionString(conn, &azstore.Options{
//		Services: []azstore.Service{azqueues.Service()},
//	})
//	err = st.Queue("jobs").Create(ctx)
//
// Queue bodies travel as the service's XML message text: a body that is
// valid UTF-8 without control characters (other than tab and LF) goes as
// is; any other goes as base64 with a marker and is decoded on receipt
// (driver.EncodeMessageText), so bodies round-trip byte for byte, as on
// memstore. Writes that may have been applied are never resent (see
// docs/azure.md).
package azqueues

import (
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
)

// Service returns the queue service, for azstore.Options.Services.
func Service() azbase.Service { return queueService{} }

type queueService struct{}

// service is the attached queue service of one store.
type service struct {
	client     *azqueue.ServiceClient
	writeRetry policy.RetryOptions
}

type ctxKey int

const ctxKeepMessageBody ctxKey = 1

// Attach implements azstore.Service.
func (queueService) Attach(a *azbase.Attachment) error {
	svc := &service{writeRetry: azbase.WriteRetry(a.Options)}
	a.Queues = svc.queue
	url := a.Endpoints["queue"]
	if url == "" {
		return nil // the handles report the missing endpoint
	}
	co := a.Options
	co.PerCallPolicies = append(co.PerCallPolicies, queuePolicy{})
	opts := &azqueue.ClientOptions{ClientOptions: co}
	var err error
	switch {
	case a.AccountKey != "":
		cred, cerr := azqueue.NewSharedKeyCredential(a.AccountName, a.AccountKey)
		if cerr != nil {
			return errors.New("azstore: the account key is not valid base64")
		}
		svc.client, err = azqueue.NewServiceClientWithSharedKeyCredential(url, cred, opts)
	case a.Token != nil:
		svc.client, err = azqueue.NewServiceClient(url, a.Token, opts)
	default:
		svc.client, err = azqueue.NewServiceClientWithNoCredential(url, opts)
	}
	if err != nil {
		return errors.New("azstore: the queue endpoint is not a valid URL")
	}
	return nil
}

// queue returns the handle of queue name. It does no I/O.
func (svc *service) queue(name string) store.Queue {
	h := &queueHandle{svc: svc, name: name}
	if svc.client != nil {
		h.client = svc.client.NewQueueClient(name)
	}
	return h
}
