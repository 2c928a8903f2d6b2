package azstore

import (
	"strings"
	"testing"
)

const secretKey = "c2VjcmV0LWtleS10aGF0LW11c3QtbmV2ZXItbGVhaw==" // base64 of a fake secret

func TestParseConnString(t *testing.T) {
	cases := []struct {
		in      string
		account string
		urls    Endpoints
		sas     string
	}{
		{
			in:      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + secretKey + ";EndpointSuffix=core.windows.net",
			account: "acct",
			urls:    Endpoints{Table: "https://acct.table.core.windows.net", Queue: "https://acct.queue.core.windows.net", Blob: "https://acct.blob.core.windows.net"},
		},
		{
			in:      "AccountName=acct;AccountKey=" + secretKey + ";EndpointSuffix=core.chinacloudapi.cn",
			account: "acct",
			urls:    Endpoints{Table: "https://acct.table.core.chinacloudapi.cn", Queue: "https://acct.queue.core.chinacloudapi.cn", Blob: "https://acct.blob.core.chinacloudapi.cn"},
		},
		{
			in:      "UseDevelopmentStorage=true",
			account: devAccountName,
			urls:    Endpoints{Blob: "http://127.0.0.1:10000/devstoreaccount1", Queue: "http://127.0.0.1:10001/devstoreaccount1", Table: "http://127.0.0.1:10002/devstoreaccount1"},
		},
		{
			in:      " accountname=devstoreaccount1 ; accountkey=" + secretKey + "; TableEndpoint=http://127.0.0.1:4000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:4001/devstoreaccount1;",
			account: devAccountName,
			urls:    Endpoints{Table: "http://127.0.0.1:4000/devstoreaccount1", Queue: "http://127.0.0.1:4001/devstoreaccount1"},
		},
		{
			in:   "TableEndpoint=https://acct.table.core.windows.net;SharedAccessSignature=?sv=2020&sig=abc",
			urls: Endpoints{Table: "https://acct.table.core.windows.net"},
			sas:  "sv=2020&sig=abc",
		},
	}
	for _, tc := range cases {
		c, err := parseConnString(tc.in)
		if err != nil {
			t.Errorf("parseConnString(%q): %v", tc.in, err)
			continue
		}
		if c.account != tc.account || c.urls != tc.urls || c.sas != tc.sas {
			t.Errorf("parseConnString(%q) = %+v, want account %q, urls %+v, sas %q", tc.in, c, tc.account, tc.urls, tc.sas)
		}
	}
}

// TestConnStringErrorsNameTheSettingNotTheKey proves malformed connection
// strings are refused with a message naming what is wrong, and that the
// key, wherever it sits, never appears in the error.
func TestConnStringErrorsNameTheSettingNotTheKey(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty"},
		{";;", "empty"},
		{"AccountName=acct;AccountKey" + secretKey, "segment 2"},
		{secretKey, "segment 1"},
		{"AccountKey=" + secretKey, "no AccountName"},
		{"AccountName=acct", "neither AccountKey nor SharedAccessSignature"},
		{"EndpointSuffix=x;DefaultEndpointsProtocol=https", "neither AccountName"},
		{"UseDevelopmentStorage=false;AccountKey=" + secretKey, "UseDevelopmentStorage must be true"},
		{"DefaultEndpointsProtocol=ftp;AccountName=acct;AccountKey=" + secretKey, "must be https or http"},
		// A name and key swapped: the name is refused without being shown.
		{"AccountName=" + secretKey + ";AccountKey=acct", "AccountName"},
		{"AccountName=Acct;AccountKey=" + secretKey, "3 to 24 lowercase letters and digits"},
		{"AccountName=ab;AccountKey=" + secretKey, "3 to 24 lowercase letters and digits"},
	}
	for _, tc := range cases {
		_, err := NewFromConnectionString(tc.in, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewFromConnectionString(%q) error = %v, want it to mention %q", tc.in, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secretKey) || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("error for %q leaks the key: %v", tc.in, err)
		}
	}
	// A key that is not base64 is refused without echoing it.
	_, err := NewFromConnectionString("AccountName=acct;AccountKey=not*base64*secret", nil)
	if err == nil || strings.Contains(err.Error(), "not*base64*secret") || !strings.Contains(err.Error(), "base64") {
		t.Errorf("bad key: error = %v", err)
	}
}

// TestSharedKeyAccountNameChecked: NewWithSharedKey refuses a name that
// is no account name, naming the setting and never the value.
func TestSharedKeyAccountNameChecked(t *testing.T) {
	_, err := NewWithSharedKey(secretKey, "acct", AccountEndpoints("acct"), nil)
	if err == nil || strings.Contains(err.Error(), secretKey) || strings.Contains(err.Error(), "c2VjcmV0") || !strings.Contains(err.Error(), "account name") {
		t.Fatalf("swapped name and key: %v", err)
	}
	if _, err := NewWithSharedKey("devstoreaccount1", devAccountKey, Endpoints{Table: "http://127.0.0.1:10002/devstoreaccount1"}, nil); err != nil {
		t.Fatalf("the development account: %v", err)
	}
}

func TestAccountEndpoints(t *testing.T) {
	got := AccountEndpoints("acct")
	want := Endpoints{Table: "https://acct.table.core.windows.net", Queue: "https://acct.queue.core.windows.net", Blob: "https://acct.blob.core.windows.net"}
	if got != want {
		t.Errorf("AccountEndpoints = %+v, want %+v", got, want)
	}
}
