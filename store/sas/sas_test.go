package sas_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/sas"
)

// The Azurite development account: the only key in the repository.
const (
	devAccount = "devstoreaccount1"
	devKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

func devCred(t *testing.T) *sas.Credential {
	t.Helper()
	c, err := sas.NewCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hmacB64 signs independently of the package: crypto/hmac over the
// decoded key.
func hmacB64(t *testing.T, s string) string {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(devKey)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func query(t *testing.T, token string) url.Values {
	t.Helper()
	q, err := url.ParseQuery(token)
	if err != nil {
		t.Fatalf("token %q: %v", token, err)
	}
	return q
}

var (
	t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

// TestTableStringToSign holds the string-to-sign to the layout of the REST
// reference ("Create a service SAS", table service, version 2015-04-05 and
// later): sp, st, se, canonicalized resource, si, sip, spr, sv, spk, srk,
// epk, erk joined by newlines, and the signature to an HMAC computed here.
func TestTableStringToSign(t *testing.T) {
	cred := devCred(t)
	v := sas.TableValues{
		Table: "Orders", Permissions: "duar", // any order in, raud out
		Start: t0.In(time.FixedZone("UTC+2", 2*3600)), Expiry: t1,
		IP: "127.0.0.1-127.0.0.9", Protocol: sas.HTTPS,
		StartPK: "tenant-42", StartRK: "01", EndPK: "tenant-42", EndRK: "09",
	}
	got, err := v.StringToSign(devAccount)
	if err != nil {
		t.Fatal(err)
	}
	const want = "raud\n" +
		"2024-05-01T12:00:00Z\n" +
		"2024-05-01T13:00:00Z\n" +
		"/table/devstoreaccount1/orders\n" +
		"\n" + // si
		"127.0.0.1-127.0.0.9\n" +
		"https\n" +
		"2019-02-02\n" +
		"tenant-42\n01\ntenant-42\n09"
	if got != want {
		t.Fatalf("string-to-sign\n got %q\nwant %q", got, want)
	}
	token, err := v.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	q := query(t, token)
	if q.Get("sig") != hmacB64(t, want) {
		t.Fatalf("sig %q, want the HMAC of the string-to-sign %q", q.Get("sig"), hmacB64(t, want))
	}
	for k, w := range map[string]string{
		"sp": "raud", "st": "2024-05-01T12:00:00Z", "se": "2024-05-01T13:00:00Z", "tn": "orders",
		"sip": "127.0.0.1-127.0.0.9", "spr": "https", "sv": "2019-02-02",
		"spk": "tenant-42", "srk": "01", "epk": "tenant-42", "erk": "09",
	} {
		if q.Get(k) != w {
			t.Errorf("%s = %q, want %q", k, q.Get(k), w)
		}
	}
	// The signature is base64 and URL-encoded in the token.
	if strings.Contains(token, "sig="+q.Get("sig")) && strings.ContainsAny(q.Get("sig"), "+/=") {
		t.Errorf("the signature is not URL-encoded in %q", token)
	}
}

// TestTableStringToSignWithPolicy: a token naming a stored policy signs
// the si and leaves the fields the policy sets empty.
func TestTableStringToSignWithPolicy(t *testing.T) {
	got, err := sas.TableValues{Table: "orders", Identifier: "readers", Protocol: sas.HTTPSAndHTTP}.StringToSign(devAccount)
	if err != nil {
		t.Fatal(err)
	}
	const want = "\n\n\n/table/devstoreaccount1/orders\nreaders\n\nhttps,http\n2019-02-02\n\n\n\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestAccountStringToSign holds the account SAS string-to-sign to the REST
// reference ("Create an account SAS"): the version 2020-12-06 form ends
// with the encryption scope and a newline; older versions end after sv.
func TestAccountStringToSign(t *testing.T) {
	v := sas.AccountValues{Services: "t", ResourceTypes: "oc", Permissions: "urla", Start: t0, Expiry: t1, Protocol: sas.HTTPS}
	got, err := v.StringToSign(devAccount)
	if err != nil {
		t.Fatal(err)
	}
	const want = "devstoreaccount1\nrlau\nt\nco\n2024-05-01T12:00:00Z\n2024-05-01T13:00:00Z\n\nhttps\n2020-12-06\n\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	v.Version = "2019-02-02"
	got, _ = v.StringToSign(devAccount)
	const old = "devstoreaccount1\nrlau\nt\nco\n2024-05-01T12:00:00Z\n2024-05-01T13:00:00Z\n\nhttps\n2019-02-02\n"
	if got != old {
		t.Fatalf("got %q, want %q", got, old)
	}
	token, err := v.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	if q := query(t, token); q.Get("sig") != hmacB64(t, old) || q.Get("ss") != "t" || q.Get("srt") != "co" || q.Get("sp") != "rlau" {
		t.Fatalf("token %v", q)
	}
}

// TestCrossCheckAztables signs the same unranged values with aztables'
// SASSignatureValues: both signatures agree. For a ranged token aztables
// signs the range but leaves spk, srk, epk and erk out of its token, so
// the service cannot verify it (403); tablekit's token carries them.
func TestCrossCheckAztables(t *testing.T) {
	akCred, err := aztables.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	perms := aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true}
	az := aztables.SASSignatureValues{
		Protocol: aztables.SASProtocolHTTPS, StartTime: t0, ExpiryTime: t1,
		Permissions: perms.String(), TableName: "orders", Version: "2019-02-02",
	}
	azToken, err := az.Sign(akCred)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := sas.TableValues{Table: "orders", Permissions: "raud", Start: t0, Expiry: t1, Protocol: sas.HTTPS}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := query(t, azToken), query(t, ours); a.Encode() != b.Encode() {
		t.Fatalf("unranged tokens differ:\naztables %s\ntablekit %s", a.Encode(), b.Encode())
	}

	az.StartPartitionKey, az.StartRowKey, az.EndPartitionKey, az.EndRowKey = "p", "01", "p", "01"
	azRanged, err := az.Sign(akCred)
	if err != nil {
		t.Fatal(err)
	}
	ranged, err := sas.TableValues{Table: "orders", Permissions: "raud", Start: t0, Expiry: t1, Protocol: sas.HTTPS,
		StartPK: "p", StartRK: "01", EndPK: "p", EndRK: "01"}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	a, b := query(t, azRanged), query(t, ranged)
	for _, k := range []string{"spk", "srk", "epk", "erk"} {
		if a.Has(k) {
			t.Errorf("aztables' ranged token now carries %s: %s", k, a.Encode())
		}
		if b.Get(k) == "" {
			t.Errorf("tablekit's ranged token lacks %s", k)
		}
	}
	if a.Get("sig") != b.Get("sig") {
		t.Errorf("aztables signs the range too, so the signatures should agree")
	}
	// Without the range in the token, its string-to-sign cannot be rebuilt:
	// what a verifier computes from aztables' token is another signature.
	p, err := sas.Parse(azRanged)
	if err != nil {
		t.Fatal(err)
	}
	if p.Verify(devCred(t)) {
		t.Errorf("aztables' ranged token verifies without its range")
	}
}

// TestCrossCheckAztablesAccount: the same account SAS from aztables and
// tablekit (version 2019-02-02, aztables' default) carry one signature.
func TestCrossCheckAztablesAccount(t *testing.T) {
	akCred, err := aztables.NewSharedKeyCredential(devAccount, devKey)
	if err != nil {
		t.Fatal(err)
	}
	qp, err := aztables.AccountSASSignatureValues{
		Protocol: aztables.SASProtocolHTTPS, StartTime: t0, ExpiryTime: t1,
		Permissions: "rwdlacu", Services: "t", ResourceTypes: "sco",
	}.Sign(akCred)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := sas.AccountValues{Version: "2019-02-02", Services: "t", ResourceTypes: "sco", Permissions: "rwdlacu",
		Start: t0, Expiry: t1, Protocol: sas.HTTPS}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := query(t, qp.Encode()), query(t, ours); a.Get("sig") != b.Get("sig") {
		t.Fatalf("signatures differ: aztables %s, tablekit %s", a.Get("sig"), b.Get("sig"))
	}
}

// TestTimesInUTC: a time in another zone is converted, never labelled Z
// as it is (aztables formats it in its own zone and appends Z).
func TestTimesInUTC(t *testing.T) {
	ny := time.FixedZone("EST", -5*3600)
	token, err := sas.TableValues{Table: "orders", Permissions: "r", Expiry: time.Date(2024, 5, 1, 7, 0, 0, 0, ny)}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	if se := query(t, token).Get("se"); se != "2024-05-01T12:00:00Z" {
		t.Fatalf("se = %q, want 2024-05-01T12:00:00Z", se)
	}
}

func TestParseRoundTrip(t *testing.T) {
	token, err := sas.TableValues{Table: "Orders", Permissions: "ra", Start: t0, Expiry: t1, Identifier: "",
		IP: "10.0.0.1", Protocol: sas.HTTPS, StartPK: "a b", EndPK: "a b", EndRK: "z&y"}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := sas.Parse("https://x.table.core.windows.net/orders?" + token)
	if err != nil {
		t.Fatal(err)
	}
	if p.Table != "orders" || p.Permissions != "ra" || p.StartPK != "a b" || p.EndRK != "z&y" || !p.StartTime().Equal(t0) || !p.ExpiryTime().Equal(t1) {
		t.Fatalf("parsed %+v", p)
	}
	if !p.Verify(devCred(t)) {
		t.Fatal("a parsed token does not verify")
	}
	if p.Encode() != token {
		t.Fatalf("Encode %q, want %q", p.Encode(), token)
	}
	if s := p.String(); strings.Contains(s, url.QueryEscape(p.Signature)) || !strings.Contains(s, "sig=REDACTED") {
		t.Fatalf("String does not redact the signature: %s", s)
	}
	if !p.InRange("a b", "") || !p.InRange("a b", "z&y") || p.InRange("a b", "z&z") || p.InRange("a a", "zzz") {
		t.Fatal("InRange")
	}
}

// TestParseRefuses: each malformed token is refused with an error that
// matches store.ErrInvalidInput, names the parameter, and does not
// contain the signature.
func TestParseRefuses(t *testing.T) {
	good, err := sas.TableValues{Table: "orders", Permissions: "r", Expiry: t1}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	sig := query(t, good).Get("sig")
	with := func(k, v string) string {
		q := query(t, good)
		q.Set(k, v)
		return q.Encode()
	}
	without := func(k string) string {
		q := query(t, good)
		q.Del(k)
		return q.Encode()
	}
	long := strings.Repeat("x", 65)
	for name, c := range map[string]struct{ token, mention string }{
		"no sig":        {without("sig"), "sig"},
		"no sv":         {without("sv"), "sv"},
		"no tn":         {without("tn"), "tn"},
		"no se":         {without("se"), "se"},
		"bad sp":        {with("sp", "rw"), `'w'`},
		"bad se":        {with("se", "tomorrow"), "se"},
		"se before st":  {with("st", "2025-01-01T00:00:00Z"), "se"},
		"old sv":        {with("sv", "2013-08-15"), "2015-04-05"},
		"bad sv":        {with("sv", "v2"), "sv"},
		"bad sip":       {with("sip", "10.0.0.300"), "sip"},
		"sip backwards": {with("sip", "10.0.0.9-10.0.0.1"), "sip"},
		"bad spr":       {with("spr", "http"), "spr"},
		"long si":       {with("si", long), "64"},
		"bad tn":        {with("tn", "1orders"), "tn"},
		"srk alone":     {with("srk", "01"), "srk"},
		"range reverse": {with("spk", "b") + "&epk=a", "epk"},
		"twice":         {good + "&sp=r", "twice"},
		"account bad":   {with("ss", "t") + "&srt=o", "account SAS"},
	} {
		_, err := sas.Parse(c.token)
		if err == nil {
			t.Errorf("%s: Parse accepted %q", name, c.token)
			continue
		}
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("%s: %v does not match ErrInvalidInput", name, err)
		}
		if !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %q does not mention %q", name, err, c.mention)
		}
		if strings.Contains(err.Error(), sig) || strings.Contains(err.Error(), url.QueryEscape(sig)) {
			t.Errorf("%s: the error holds the signature: %v", name, err)
		}
	}
}

// TestSignRefuses: bad values are refused naming the value and the limit.
func TestSignRefuses(t *testing.T) {
	cred := devCred(t)
	for name, c := range map[string]struct {
		v       sas.TableValues
		mention []string
	}{
		"unknown letter": {sas.TableValues{Table: "orders", Permissions: "rl", Expiry: t1}, []string{`'l'`, "r (query)"}},
		"end before st":  {sas.TableValues{Table: "orders", Permissions: "r", Start: t1, Expiry: t0}, []string{"se 2024-05-01T12:00:00Z", "st 2024-05-01T13:00:00Z"}},
		"long si":        {sas.TableValues{Table: "orders", Identifier: strings.Repeat("p", 65)}, []string{"65 characters", "at most 64"}},
		"table name":     {sas.TableValues{Table: "my-orders", Permissions: "r", Expiry: t1}, []string{"my-orders", "'-'"}},
		"reserved table": {sas.TableValues{Table: "Tables", Permissions: "r", Expiry: t1}, []string{"reserved"}},
		"pk range":       {sas.TableValues{Table: "orders", Permissions: "r", Expiry: t1, StartPK: "b", EndPK: "a"}, []string{`epk "a"`, `spk "b"`}},
		"rk range":       {sas.TableValues{Table: "orders", Permissions: "r", Expiry: t1, StartPK: "a", StartRK: "5", EndPK: "a", EndRK: "4"}, []string{`erk "4"`, `srk "5"`}},
		"rk without pk":  {sas.TableValues{Table: "orders", Permissions: "r", Expiry: t1, StartRK: "5"}, []string{"srk", "spk"}},
		"no expiry":      {sas.TableValues{Table: "orders", Permissions: "r"}, []string{"se"}},
		"no permission":  {sas.TableValues{Table: "orders", Expiry: t1}, []string{"sp"}},
		"bad ip":         {sas.TableValues{Table: "orders", Permissions: "r", Expiry: t1, IP: "localhost"}, []string{"localhost"}},
		"bad key":        {sas.TableValues{Table: "orders", Permissions: "r", Expiry: t1, StartPK: "a/b"}, []string{"spk"}},
		"old version":    {sas.TableValues{Version: "2013-08-15", Table: "orders", Permissions: "r", Expiry: t1}, []string{"2013-08-15", "2015-04-05"}},
	} {
		_, err := c.v.Sign(cred)
		if err == nil {
			t.Errorf("%s: signed", name)
			continue
		}
		if !errors.Is(err, store.ErrInvalidInput) {
			t.Errorf("%s: %v does not match ErrInvalidInput", name, err)
		}
		for _, m := range c.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not mention %q", name, err, m)
			}
		}
	}
	if _, err := (sas.AccountValues{Services: "tx", ResourceTypes: "o", Permissions: "r", Expiry: t1}).Sign(cred); err == nil || !strings.Contains(err.Error(), `'x'`) {
		t.Errorf("account SAS with service x: %v", err)
	}
}

// TestCredentialHidesKey: neither errors nor printing show the key.
func TestCredentialHidesKey(t *testing.T) {
	_, err := sas.NewCredential(devAccount, "not base64!"+devKey)
	if err == nil || strings.Contains(err.Error(), devKey) {
		t.Fatalf("NewCredential: %v", err)
	}
	c := devCred(t)
	for _, s := range []string{c.String(), c.GoString()} {
		if strings.Contains(s, devKey[:10]) {
			t.Fatalf("%s shows the key", s)
		}
	}
}

func TestURL(t *testing.T) {
	if got := sas.TableURL("acct", "orders", "sv=x"); got != "https://acct.table.core.windows.net/orders?sv=x" {
		t.Fatal(got)
	}
	if got := sas.EndpointTableURL("http://127.0.0.1:10002/devstoreaccount1/", "orders", "?sv=x"); got != "http://127.0.0.1:10002/devstoreaccount1/orders?sv=x" {
		t.Fatal(got)
	}
}
