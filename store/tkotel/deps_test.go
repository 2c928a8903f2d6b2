package tkotel_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoOpenTelemetryOutsideTkotel: OpenTelemetry is linked only by a
// program that imports store/tkotel. The contract, both backends, the
// mapper, the meter, the patterns' engine and a memstore example link
// none of it; tkotel itself does.
func TestNoOpenTelemetryOutsideTkotel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	const mod = "github.com/tablekit/tablekit/"
	pkgs := []string{"store", "store/meter", "store/intercept", "memstore", "mapper", "store/azstore",
		"store/azstore/azqueues", "store/azstore/azblobs", "core/eventual", "examples/quickstart", "examples/orders"}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}"}
	for _, p := range pkgs {
		args = append(args, mod+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "go.opentelemetry.io/") || p == mod+"store/tkotel" {
			t.Errorf("a program without store/tkotel links %s", p)
		}
	}
	out, err = exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+"store/tkotel").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "go.opentelemetry.io/otel/trace") {
		t.Error("store/tkotel does not link OpenTelemetry: the test checks nothing")
	}
}
