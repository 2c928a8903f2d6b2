package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `3 employees in Sales; before the worker, jonesj@contoso.com found: false
email jonesj@contoso.com -> emp_000223 John Jones (copy of version 1, partition email_Sales)
last name Jones (table EmployeeIndex): John emp_000223 Ann emp_000224
emails from a to e: annj@contoso.com donh@contoso.com
before the worker, annj@contoso.com dangles: true
before the worker, John's copy says 34, his entity 35: stale true
after the worker, ann.jones@contoso.com -> emp_000224 (stale false)
another donh@contoso.com: refused, email "donh@contoso.com" is taken by ("Sales", "emp_000225") (partition "email_Sales", EntityAlreadyExists)
after Don left, donh@contoso.com found: false
poison queue: 0 messages
`

// TestXindex runs the walkthrough on memstore and on Azurite.
func TestXindex(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		var out bytes.Buffer
		if err := run(t.Context(), &out, b.Store, fmt.Sprint(time.Now().UnixNano()%1_000_000)); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != want {
			t.Fatalf("output:\n%s\nwant:\n%s", got, want)
		}
	})
}
