package backend

import (
	"strings"
	"testing"
)

func TestChoosePrecedence(t *testing.T) {
	t.Setenv(ConnEnv, "")
	t.Setenv(AzuriteEnv, "")
	if got := Choose(""); got != "" {
		t.Fatalf("nothing set: %q, want memstore", got)
	}
	t.Setenv(AzuriteEnv, "azurite")
	if got := Choose(""); got != "azurite" {
		t.Fatalf("only %s: %q", AzuriteEnv, got)
	}
	t.Setenv(ConnEnv, "conn")
	if got := Choose(""); got != "conn" {
		t.Fatalf("%s before %s: %q", ConnEnv, AzuriteEnv, got)
	}
	if got := Choose("flag"); got != "flag" {
		t.Fatalf("-conn first: %q", got)
	}
}

func TestOpenNamesTheBackendWithoutSecrets(t *testing.T) {
	st, name, err := Open("")
	if err != nil || st == nil || !strings.HasPrefix(name, "memstore") {
		t.Fatalf("Open(\"\") = %v, %q, %v", st, name, err)
	}
	const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	conn := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + key + ";TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
	_, name, err = Open(conn)
	if err != nil || !strings.HasPrefix(name, "Azurite") || strings.Contains(name, key) {
		t.Fatalf("Open(azurite) = %q, %v", name, err)
	}
	if _, name, _ := Open("UseDevelopmentStorage=true"); !strings.HasPrefix(name, "Azurite") {
		t.Fatalf("development storage: %q", name)
	}
	if got := describe("AccountName=myacct;AccountKey=" + key); got != "Azure (account myacct)" || strings.Contains(got, key) {
		t.Fatalf("describe(azure) = %q", got)
	}
}
