package azkeyvault

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoKeyVaultOutsideAzkeyvault proves that a program using package
// encryption without this one links none of the Key Vault SDK.
func TestNoKeyVaultOutsideAzkeyvault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/tablekit/tablekit/"
	list := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	for _, p := range list(mod + "encryption") {
		if strings.Contains(p, "/keyvault/") || strings.HasPrefix(p, "github.com/Azure/") || p == mod+"encryption/azkeyvault" {
			t.Errorf("a program with package encryption alone links %s", p)
		}
	}
	found := false
	for _, p := range list(mod + "encryption/azkeyvault") {
		found = found || p == "github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys"
	}
	if !found {
		t.Error("encryption/azkeyvault does not link azkeys: the test checks nothing")
	}
}
