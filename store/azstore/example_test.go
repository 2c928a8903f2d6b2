package azstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/azstore"
)

// A connection string gives tables, queues and blobs of one account; the
// handles do no I/O until they are used.
func ExampleNewFromConnectionString() {
	st, err := azstore.NewFromConnectionString("UseDevelopmentStorage=true", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Table("Orders").Name(), st.Queue("jobs").Name(), st.Container("docs").Name())
	// Output: Orders jobs docs
}

// Bad input is refused before any request, with the same code memstore
// gives; a malformed connection string is refused without echoing it.
func ExampleNewFromConnectionString_errors() {
	_, err := azstore.NewFromConnectionString("AccountName=acct;AccountKey", nil)
	fmt.Println(err)

	st, _ := azstore.NewFromConnectionString("UseDevelopmentStorage=true", nil)
	_, err = st.Table("Orders").Insert(context.Background(), store.Entity{PartitionKey: "a/b", RowKey: "1"})
	fmt.Println(store.Code(err), errors.Is(err, store.ErrInvalidInput))
	// Output:
	// azstore: connection string: segment 2 is not of the form Name=Value
	// OutOfRangeInput true
}

// On Azure, authenticate with Microsoft Entra ID through azidentity: the
// DefaultAzureCredential tries environment variables, workload and managed
// identity, and the Azure CLI login in turn.
func ExampleNewWithTokenCredential() {
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		log.Fatal(err)
	}
	st, err := azstore.NewWithTokenCredential(azstore.AccountEndpoints(os.Getenv("AZURE_STORAGE_ACCOUNT")), cred, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := st.CreateTableIfNotExists(context.Background(), "Orders"); err != nil {
		log.Fatal(err)
	}
}

// A shared key authenticates every request of the three services; the
// handles do no I/O until they are used, and a bad key is refused without
// echoing it.
func ExampleNewWithSharedKey() {
	st, err := azstore.NewWithSharedKey("myaccount", "c2VjcmV0LWtleQ==", azstore.AccountEndpoints("myaccount"), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Table("Orders").Name())

	_, err = azstore.NewWithSharedKey("myaccount", "not base64!", azstore.AccountEndpoints("myaccount"), nil)
	fmt.Println(err)
	// Output:
	// Orders
	// azstore: the account key is not valid base64
}

// A SAS URL carries its signature in the query. Endpoints left empty leave
// that service unavailable, with an error naming it.
func ExampleNewFromSASURL() {
	st, err := azstore.NewFromSASURL(azstore.Endpoints{
		Table: "https://myaccount.table.core.windows.net/?sv=2024-11-04&ss=t&srt=sco&sp=rwdlacu&sig=...",
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Table("Orders").Name())
	err = st.Queue("jobs").Create(context.Background())
	fmt.Println(store.Code(err), errors.Is(err, store.ErrInvalidInput))
	// Output:
	// Orders
	// InvalidInput true
}
