package azstore

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/tablekit/tablekit/store"
)

// Table names are case-insensitive on Azure: an entity operation through
// any letter case reaches the table. Azurite matches entity operations
// case-sensitively and answers TableNotFound for another case. On an
// emulator endpoint (loopback, or the devstoreaccount1 path) azstore then
// looks the name up case-insensitively and retries once with the case the
// table was created in. On Azure the retry never happens.

// isEmulator reports whether a table endpoint is a local emulator.
func isEmulator(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	if strings.HasPrefix(strings.TrimPrefix(u.Path, "/"), devAccountName) {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// recase reports whether err is a TableNotFound that a differently cased
// existing table explains; it then points h at that table so the caller
// can retry once.
func (h *tableHandle) recase(ctx context.Context, err error) bool {
	if err == nil || !h.s.emulator {
		return false
	}
	var re *azcore.ResponseError
	notFound := errors.As(err, &re) && re.ErrorCode == store.CodeTableNotFound ||
		store.Code(err) == store.CodeTableNotFound // inside a batch answer
	if !h.s.emulator || !notFound {
		return false
	}
	want := strings.ToLower(h.name)
	page := store.ListTablesOptions{}
	for {
		p, lerr := h.s.ListTables(ctx, page)
		if lerr != nil {
			return false
		}
		for _, t := range p.Tables {
			if strings.ToLower(t.Name) == want && t.Name != h.client.Load().name {
				h.client.Store(&boundTable{name: t.Name, c: h.s.tables.NewClient(t.Name)})
				return true
			}
		}
		if p.Continuation == "" {
			return false
		}
		page.Continuation = p.Continuation
	}
}
