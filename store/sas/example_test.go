package sas_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/tablekit/tablekit/store/sas"
)

// A read-only token for one tenant's partition of the orders table, valid
// for an hour, and the URL to hand to the tenant's process
// (azstore.NewFromSASURL takes it as the Table endpoint).
func ExampleTableValues_Sign() {
	// The Azurite development account; use your account's key, from a
	// secret store, never from source.
	cred, err := sas.NewCredential("devstoreaccount1",
		"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==")
	if err != nil {
		fmt.Println(err)
		return
	}
	start := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	token, err := sas.TableValues{
		Table:       "orders",
		Permissions: "r",
		Start:       start.Add(-5 * time.Minute), // clock skew
		Expiry:      start.Add(time.Hour),
		Protocol:    sas.HTTPS,
		StartPK:     "tenant-42",
		EndPK:       "tenant-42",
	}.Sign(cred)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := sas.Parse(token)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p) // String redacts the signature: safe to log
	u := sas.TableURL("devstoreaccount1", "orders", token)
	fmt.Println(u[:strings.IndexByte(u, '?')])
	// Output:
	// epk=tenant-42&se=2024-05-01T13%3A00%3A00Z&sig=REDACTED&sp=r&spk=tenant-42&spr=https&st=2024-05-01T11%3A55%3A00Z&sv=2019-02-02&tn=orders
	// https://devstoreaccount1.table.core.windows.net/orders
}
