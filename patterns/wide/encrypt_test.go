package wide_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/internal/backendtest"
	"github.com/tablekit/tablekit/internal/enctest"
	"github.com/tablekit/tablekit/patterns/wide"
	"github.com/tablekit/tablekit/store"
)

// Secret is a wide value with an encrypted property.
type Secret struct {
	Tenant string `table:",pk"`
	ID     string `table:",rk"`
	Name   string `table:",encrypt"`
	Body   string
}

const (
	wideSecret = "WideSecret1234567"
	bigSecret  = "WideBigSecret7654"
)

// TestEncryptedWideValue writes a wide value whose encrypted property fits
// one property through an encrypting store: stored encrypted, read back.
// One whose encrypted property is over a property's limit, which would be
// cut into pieces the table does not encrypt, is refused before anything
// is written.
func TestEncryptedWideValue(t *testing.T) {
	backendtest.Run(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		name := b.NewTable(t, "encwide")
		st := enctest.Codec(t, "Name").Store(b.Store, name)
		docs, err := wide.New[Secret](st, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		body := strings.Repeat("b", 40000) // cut into pieces: not encrypted, fine
		if _, err := docs.Put(ctx, "p", "small", &Secret{Name: wideSecret, Body: body}, ""); err != nil {
			t.Fatal(err)
		}
		got, _, err := docs.Get(ctx, "p", "small")
		if err != nil || got.Name != wideSecret || got.Body != body {
			t.Fatalf("Get = %.40q, %v", got.Name, err)
		}
		_, err = docs.Put(ctx, "p", "big", &Secret{Name: bigSecret + strings.Repeat("x", 40000)}, "")
		if !errors.Is(err, store.ErrInvalidInput) || !strings.Contains(err.Error(), `"Name"`) {
			t.Fatalf("an encrypted value cut into pieces: %v", err)
		}
		stored, err := enctest.Scan(ctx, b.Store, []string{name}, wideSecret, bigSecret)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range stored {
			t.Error("plaintext reached the backend: ", l)
		}
		rows, err := enctest.Rows(ctx, b.Store, name)
		if err != nil {
			t.Fatal(err)
		}
		for k := range rows {
			if strings.HasPrefix(k, "p/big") {
				t.Fatalf("the refused value left row %s", k)
			}
		}
	})
}
