package cli

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tablekit/tablekit/internal/azuritetest"
	"github.com/tablekit/tablekit/store/sas"
)

// connField returns a field of a connection string.
func connField(conn, name string) string {
	for _, kv := range strings.Split(conn, ";") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// TestSASURLOnAzurite runs commands with --sas-url against Azurite, the
// token made with store/sas for one table: a read-write token puts, gets,
// queries and exports; a read-only one is refused a put (exit 1, the
// service's refusal named, the signature nowhere in the output).
func TestSASURLOnAzurite(t *testing.T) {
	conn := azuritetest.Conn(t)
	endpoint := connField(conn, "TableEndpoint")
	if endpoint == "" {
		t.Fatalf("the Azurite connection string has no TableEndpoint")
	}
	if u, err := url.Parse(endpoint); err != nil || u.Hostname() != "127.0.0.1" {
		t.Fatalf("TableEndpoint %q is not on 127.0.0.1", endpoint)
	}
	cred, err := sas.NewCredential(connField(conn, "AccountName"), connField(conn, "AccountKey"))
	if err != nil {
		t.Fatal(err)
	}
	connFile := t.TempDir() + "/azurite.conn"
	if err := os.WriteFile(connFile, []byte(conn), 0o600); err != nil {
		t.Fatal(err)
	}
	table := "sas" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	if r := run(t, nil, "", "--conn-file", connFile, "tables", "create", table); r.code != 0 {
		t.Fatalf("tables create: %d %s", r.code, r.err)
	}
	defer run(t, nil, "", "--conn-file", connFile, "tables", "delete", table, "--yes")

	token := func(perm string) string {
		tok, err := sas.TableValues{Table: table, Permissions: perm, Start: time.Now().Add(-time.Minute), Expiry: time.Now().Add(time.Hour)}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	sigOf := func(tok string) string {
		v, err := url.ParseQuery(tok)
		if err != nil || v.Get("sig") == "" {
			t.Fatalf("token without a signature")
		}
		return v.Get("sig")
	}
	noSecret := func(r result, tok string) {
		t.Helper()
		for _, s := range []string{sigOf(tok), url.QueryEscape(sigOf(tok)), tok} {
			if strings.Contains(r.out+r.err, s) {
				t.Fatalf("the SAS signature was printed:\nstdout: %s\nstderr: %s", r.out, r.err)
			}
		}
	}

	rw := token("raud")
	rwURL := endpoint + "?" + rw
	r := run(t, nil, `{"PartitionKey":"cust-1","RowKey":"o-1","Total@odata.type":"Edm.Double","Total":12.5}`, "--sas-url", rwURL, "put", table)
	noSecret(r, rw)
	if r.code != 0 {
		t.Fatalf("put with a read-write SAS: exit %d\n%s", r.code, r.err)
	}
	r = run(t, nil, "", "--sas-url", rwURL, "get", table, "cust-1", "o-1")
	noSecret(r, rw)
	if r.code != 0 || !strings.Contains(r.out, `"Total":12.5`) {
		t.Fatalf("get with a read-write SAS: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}
	// the same token from the environment, for a query and an export
	r = run(t, map[string]string{"TABLEKIT_SAS_URL": rwURL}, "", "query", table, "--filter", "PartitionKey eq 'cust-1'")
	noSecret(r, rw)
	if r.code != 0 || len(r.lines(t)) != 1 {
		t.Fatalf("query with TABLEKIT_SAS_URL: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}
	r = run(t, nil, "", "--sas-url", rwURL, "export", table)
	noSecret(r, rw)
	if r.code != 0 || len(r.lines(t)) != 1 {
		t.Fatalf("export with a read-write SAS: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}

	ro := token("r")
	roURL := endpoint + "?" + ro
	r = run(t, nil, "", "--sas-url", roURL, "get", table, "cust-1", "o-1")
	noSecret(r, ro)
	if r.code != 0 {
		t.Fatalf("get with a read-only SAS: exit %d\n%s", r.code, r.err)
	}
	r = run(t, nil, `{"PartitionKey":"cust-1","RowKey":"o-2"}`, "--sas-url", roURL, "put", table)
	noSecret(r, ro)
	if r.code != 1 {
		t.Fatalf("put with a read-only SAS: exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}
	if !strings.Contains(r.err, "AuthorizationPermissionMismatch") && !strings.Contains(r.err, "AuthorizationFailure") {
		t.Fatalf("put with a read-only SAS: the error does not name the refusal:\n%s", r.err)
	}
	t.Logf("refused: %s", strings.TrimSpace(r.err))
	// and nothing was written
	r = run(t, nil, "", "--sas-url", rwURL, "get", table, "cust-1", "o-2")
	if r.code != 1 {
		t.Fatalf("the refused put wrote o-2: exit %d %s", r.code, r.out)
	}
}
