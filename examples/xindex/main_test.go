package main

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/backendtest"
)

const want = `4 employees; before the engine ran, jonesj@contoso.com -> Sales 000223 through its claim: true
email jonesj@contoso.com -> 000223 John Jones (copy of version 1 in EmployeeEmails)
last name Jones, every department: Ann (Marketing) John (Sales)
emails from a to e: annj@contoso.com donh@contoso.com
last names starting with Jo: Johnson Jo Jones Ann Jones John
before the engine ran, annj@contoso.com is no longer Ann's: true
before the engine ran, John's copy says 34, his entity 35: stale true
after the engine ran, ann.jones@contoso.com -> 000224 (stale false)
another donh@contoso.com: refused, email "donh@contoso.com" is held in Sales (EntityAlreadyExists)
after Don left, donh@contoso.com found: false
Check: 3 entities, 0 findings
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
