package azstore

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablekit/tablekit/memstore"
	"github.com/tablekit/tablekit/store"
	"github.com/tablekit/tablekit/store/sas"
)

// sasRows are the rows of the SAS tests: two share the row key 01.
var sasRows = [][2]string{{"p", "01"}, {"p", "02"}, {"q", "01"}}

func sasKeys(t *testing.T, tb store.Table) []string {
	t.Helper()
	var out []string
	q := store.Query{}
	for {
		page, err := tb.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		for _, e := range page.Entities {
			out = append(out, e.PartitionKey+"/"+e.RowKey)
		}
		if page.Continuation == "" {
			sort.Strings(out)
			return out
		}
		q.Continuation = page.Continuation
	}
}

// TestSASAzurite runs tokens signed by store/sas against Azurite through
// azstore.NewFromSASURL, and the same tokens against memstore's WithSAS:
//
//   - Azurite accepts tablekit's ranged token (its signature covers the
//     range, and the token carries it);
//   - Azurite refuses aztables' ranged token with 403: aztables signs the
//     range but leaves spk, srk, epk and erk out of the token;
//   - Azurite does not enforce the range: under spk=p, srk=01, epk=p,
//     erk=01 it returns every row, where Azure and memstore return (p,01)
//     only, and it lets a write outside the range through, which memstore
//     (as Azure) refuses with 403;
//   - a token naming a stored access policy set through azstore works,
//     and is refused once the policy is removed, on both.
func TestSASAzurite(t *testing.T) {
	conn := azuriteConn(t)
	cs, err := parseConnString(conn)
	if err != nil {
		t.Fatal(err)
	}
	if cs.account == "" || cs.key == "" || cs.urls.Table == "" {
		t.Skip("the Azurite connection string has no account key or table endpoint")
	}
	ctx := context.Background()
	admin := azuriteStore(t)
	name := fmt.Sprintf("sasrange%d", time.Now().UnixNano()%1e9)
	if err := admin.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	defer admin.DeleteTable(ctx, name)
	mem := memstore.New(memstore.WithAccount(cs.account, cs.key))
	if err := mem.CreateTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	for _, k := range sasRows {
		e := store.Entity{PartitionKey: k[0], RowKey: k[1], Properties: map[string]any{"N": int32(1)}}
		if _, err := admin.Table(name).Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Table(name).Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	cred, err := sas.NewCredential(cs.account, cs.key)
	if err != nil {
		t.Fatal(err)
	}
	viaSAS := func(token string) store.Table {
		t.Helper()
		st, err := NewFromSASURL(Endpoints{Table: cs.urls.Table + "?" + token}, &Options{Retry: policy.RetryOptions{MaxRetries: -1}})
		if err != nil {
			t.Fatal(err)
		}
		return st.Table(name)
	}
	// Azurite's clock and ours may differ a little: start in the past.
	start, expiry := time.Now().Add(-5*time.Minute), time.Now().Add(time.Hour)
	ranged := sas.TableValues{Table: name, Permissions: "raud", Start: start, Expiry: expiry,
		StartPK: "p", StartRK: "01", EndPK: "p", EndRK: "01"}
	token, err := ranged.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}

	// Azurite accepts tablekit's ranged token, and ignores its range.
	az := viaSAS(token)
	azRows := sasKeys(t, az)
	if len(azRows) < 2 {
		t.Fatalf("Azurite returned %v under the ranged token: it now enforces the range, update docs/security.md", azRows)
	}
	t.Logf("Azurite under spk=p srk=01 epk=p erk=01: %v (Azure returns [p/01])", azRows)
	if _, err := az.Get(ctx, "p", "01", nil); err != nil {
		t.Fatalf("Azurite refuses a point read in range: %v", err)
	}
	_, err = az.Upsert(ctx, store.Entity{PartitionKey: "q", RowKey: "02"}, store.Merge)
	t.Logf("Azurite, upsert outside the range: %v", err)
	if err == nil {
		if err := admin.Table(name).Delete(ctx, "q", "02", store.ETagAny); err != nil {
			t.Fatal(err)
		}
	}

	// memstore enforces the range as Azure does.
	memView := mem.WithSAS(token).Table(name)
	if got := sasKeys(t, memView); strings.Join(got, " ") != "p/01" {
		t.Fatalf("memstore under the ranged token: %v, want [p/01]", got)
	}
	if _, err := memView.Get(ctx, "p", "02", nil); store.Code(err) != store.CodeResourceNotFound {
		t.Fatalf("memstore point read outside the range: %v, want ResourceNotFound", err)
	}
	if _, err := memView.Upsert(ctx, store.Entity{PartitionKey: "q", RowKey: "02"}, store.Merge); store.Code(err) != store.CodeAuthorizationFailure {
		t.Fatalf("memstore write outside the range: %v, want AuthorizationFailure", err)
	}

	// aztables' ranged token lacks the range: Azurite cannot verify it.
	akCred, err := aztables.NewSharedKeyCredential(cs.account, cs.key)
	if err != nil {
		t.Fatal(err)
	}
	azv := aztables.SASSignatureValues{TableName: name, Permissions: "raud", StartTime: start.UTC(), ExpiryTime: expiry.UTC(),
		StartPartitionKey: "p", StartRowKey: "01", EndPartitionKey: "p", EndRowKey: "01"}
	azRanged, err := azv.Sign(akCred)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(azRanged, "spk=") {
		t.Fatal("aztables' ranged token now carries spk: update docs/security.md")
	}
	_, err = viaSAS(azRanged).Query(ctx, store.Query{})
	if store.Status(err) != 403 {
		t.Fatalf("Azurite under aztables' ranged token: %v, want 403", err)
	}
	t.Logf("Azurite under aztables' ranged token: %s", store.Code(err))
	_, err = mem.WithSAS(azRanged).Table(name).Query(ctx, store.Query{})
	if store.Code(err) != store.CodeAuthenticationFailed {
		t.Fatalf("memstore under aztables' ranged token: %v, want AuthenticationFailed", err)
	}
	// Unranged, aztables' token works on both.
	azv.StartPartitionKey, azv.StartRowKey, azv.EndPartitionKey, azv.EndRowKey = "", "", "", ""
	azPlain, err := azv.Sign(akCred)
	if err != nil {
		t.Fatal(err)
	}
	if got := sasKeys(t, viaSAS(azPlain)); len(got) != len(sasRows) {
		t.Fatalf("Azurite under aztables' unranged token: %v", got)
	}
	if got := sasKeys(t, mem.WithSAS(azPlain).Table(name)); len(got) != len(sasRows) {
		t.Fatalf("memstore under aztables' unranged token: %v", got)
	}

	// A stored access policy, set through store.ACLStore on both.
	pol := []store.SignedIdentifier{{ID: "readers", Policy: store.AccessPolicy{Permission: "r", Start: start.Truncate(time.Second), Expiry: expiry.Truncate(time.Second)}}}
	for _, acl := range []store.ACLStore{admin, mem} {
		if err := acl.SetAccessPolicy(ctx, name, pol); err != nil {
			t.Fatalf("%T.SetAccessPolicy: %v", acl, err)
		}
		got, err := acl.GetAccessPolicy(ctx, name)
		if err != nil || len(got) != 1 || got[0].ID != "readers" || got[0].Policy.Permission != "r" || !got[0].Policy.Expiry.Equal(pol[0].Policy.Expiry) {
			t.Fatalf("%T.GetAccessPolicy: %+v %v", acl, got, err)
		}
	}
	siToken, err := sas.TableValues{Table: name, Identifier: "readers"}.Sign(cred)
	if err != nil {
		t.Fatal(err)
	}
	if got := sasKeys(t, viaSAS(siToken)); len(got) != len(sasRows) {
		t.Fatalf("Azurite under the policy's token: %v", got)
	}
	if got := sasKeys(t, mem.WithSAS(siToken).Table(name)); len(got) != len(sasRows) {
		t.Fatalf("memstore under the policy's token: %v", got)
	}
	for _, acl := range []store.ACLStore{admin, mem} {
		if err := acl.SetAccessPolicy(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := viaSAS(siToken).Query(ctx, store.Query{}); store.Status(err) != 403 {
		t.Fatalf("Azurite after the policy was removed: %v, want 403", err)
	}
	if _, err := mem.WithSAS(siToken).Table(name).Query(ctx, store.Query{}); store.Code(err) != store.CodeAuthenticationFailed {
		t.Fatalf("memstore after the policy was removed: %v, want AuthenticationFailed", err)
	}
	// No error of a refused token shows its signature.
	sig := mustParseSAS(t, siToken).Signature
	_, err = viaSAS(siToken).Get(ctx, "p", "01", nil)
	if err == nil || strings.Contains(err.Error(), sig) || strings.Contains(err.Error(), url.QueryEscape(sig)) {
		t.Fatalf("refused token's error: %v", err)
	}
}

func mustParseSAS(t *testing.T, token string) *sas.Params {
	t.Helper()
	p, err := sas.Parse(token)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
