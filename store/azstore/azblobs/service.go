// Package azblobs adds the Blob service to an azstore.Store, on the
// official azblob module: a program that does not import this package
// does not link it (nor azblob's dependencies).
//
//	st, err := azstore.NewFromConnectionString(conn, &azstore.Options{
//		Services: []azstore.Service{azblobs.Service()},
//	})
//	_, err = st.Container("docs").Put(ctx, "a.txt", data, nil)
//
// Put writes block blobs in one request; CreateAppend and AppendBlock
// write append blobs, a block per request. Listed ETags carry the quotes
// of the service's ETag headers, so a listed ETag equals Put's and serves
// as If-Match. Writes that may have been applied are never resent unless
// they are unconditional puts or creates, or appends with an append
// position, which driver.SettleAppend settles by reading the blob back (see
// docs/azure.md and docs/queues-blobs.md).
package azblobs

import (
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore/internal/azbase"
)

// Service returns the blob service, for azstore.Options.Services.
func Service() azbase.Service { return blobService{} }

type blobService struct{}

// service is the attached blob service of one store.
type service struct {
	client     *azblob.Client
	writeRetry policy.RetryOptions
}

// Attach implements azstore.Service.
func (blobService) Attach(a *azbase.Attachment) error {
	co := a.Options
	co.Retry.TryTimeout = a.BlobTryTimeout
	svc := &service{writeRetry: azbase.WriteRetry(co)}
	a.Containers = svc.container
	url := a.Endpoints["blob"]
	if url == "" {
		return nil // the handles report the missing endpoint
	}
	opts := &azblob.ClientOptions{ClientOptions: co}
	var err error
	switch {
	case a.AccountKey != "":
		cred, cerr := azblob.NewSharedKeyCredential(a.AccountName, a.AccountKey)
		if cerr != nil {
			return errors.New("azstore: the account key is not valid base64")
		}
		svc.client, err = azblob.NewClientWithSharedKeyCredential(url, cred, opts)
	case a.Token != nil:
		svc.client, err = azblob.NewClient(url, a.Token, opts)
	default:
		svc.client, err = azblob.NewClientWithNoCredential(url, opts)
	}
	if err != nil {
		return errors.New("azstore: the blob endpoint is not a valid URL")
	}
	return nil
}

// container returns the handle of container name. It does no I/O.
func (svc *service) container(name string) store.Container {
	h := &containerHandle{svc: svc, name: name}
	if svc.client != nil {
		h.client = svc.client.ServiceClient().NewContainerClient(name)
	}
	return h
}
