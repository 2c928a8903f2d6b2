package cli

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

type fakeCredential struct{ calls atomic.Int32 }

func (f *fakeCredential) GetToken(ctx context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.calls.Add(1)
	return azcore.AccessToken{Token: "fake-entra-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestAccountWithEntraID runs --account against a loopback server that
// accepts only the bearer token of the (fake) Microsoft Entra ID credential.
func TestAccountWithEntraID(t *testing.T) {
	var sawBearer atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fake-entra-token" {
			w.Header().Set("x-ms-error-code", "AuthenticationFailed")
			w.WriteHeader(http.StatusForbidden)
			return
		}
		sawBearer.Store(true)
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		w.Write([]byte(`{"value":[{"TableName":"Alpha"},{"TableName":"Beta"}]}`))
	}))
	defer srv.Close()
	cred := &fakeCredential{}
	var out, errb strings.Builder
	code := Main(context.Background(), []string{"--account", "myaccount", "--table-endpoint", srv.URL, "tables", "list"}, Env{
		Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Credential: func() (azcore.TokenCredential, error) { return cred, nil },
		Transport:  srv.Client(),
	})
	if code != 0 || !sawBearer.Load() || cred.calls.Load() == 0 {
		t.Fatalf("exit %d, bearer seen %v, token requests %d: %s %s", code, sawBearer.Load(), cred.calls.Load(), out.String(), errb.String())
	}
	if out.String() != "{\"table\":\"Alpha\"}\n{\"table\":\"Beta\"}\n" {
		t.Errorf("tables list: %q", out.String())
	}
	if strings.Contains(out.String()+errb.String(), "fake-entra-token") {
		t.Error("the token was printed")
	}
	// the default credential is built without network access; a bad name is a usage error
	if r := run(t, nil, "", "--account", "Not_An-Account", "tables", "list"); r.code != 2 {
		t.Errorf("bad account name: %d %s", r.code, r.err)
	}
}

// TestSecretsNeverPrinted fails requests on purpose and checks that no
// key or signature shows in stdout or stderr, whether it came on the
// command line, from a file or from the environment.
func TestSecretsNeverPrinted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ms-error-code", "AuthenticationFailed")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"odata.error":{"code":"AuthenticationFailed","message":{"value":"Server failed to authenticate the request."}}}`))
	}))
	defer srv.Close()
	key := base64.StdEncoding.EncodeToString([]byte("TOPSECRETKEYMATERIAL-0123456789abcdef"))
	conn := "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=" + key + ";TableEndpoint=" + srv.URL + "/acct"
	file := filepath.Join(t.TempDir(), "conn")
	os.WriteFile(file, []byte(conn+"\n"), 0o600)
	sig := "sv=2023-01-03&ss=t&srt=sco&sp=rl&sig=TOPSECRETSIGNATURE%3D"
	cases := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"--conn", nil, []string{"--conn", conn}},
		{"--conn-file", nil, []string{"--conn-file", file}},
		{"TABLEKIT_CONN", map[string]string{"TABLEKIT_CONN": conn}, nil},
		{"AZURE_STORAGE_CONNECTION_STRING", map[string]string{"AZURE_STORAGE_CONNECTION_STRING": conn}, nil},
		{"--sas-url", nil, []string{"--sas-url", srv.URL + "/?" + sig}},
		{"bad connection string", nil, []string{"--conn", "AccountName=acct;AccountKey=" + key + ";Nonsense"}},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{{"tables", "list"}, {"get", "Orders", "a", "b"}, {"import", "Orders", "--create"}} {
			r := run(t, c.env, `{"PartitionKey":"a","RowKey":"b"}`, append(append([]string{}, c.args...), cmd...)...)
			if r.code == 0 {
				t.Errorf("%s %v: succeeded against a server that refuses everything", c.name, cmd)
			}
			all := r.out + r.err
			for _, secret := range []string{key, "TOPSECRET", "TOPSECRETSIGNATURE"} {
				if strings.Contains(all, secret) {
					t.Errorf("%s %v printed a secret: %s", c.name, cmd, all)
				}
			}
		}
	}
}
