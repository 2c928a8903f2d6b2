package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestGoInstallPath builds the command by its module path, as go install
// does, and runs the binary: --help lists the commands, version prints
// the module version the binary carries (as go version -m reads it, or
// (devel)) and the Go version.
func TestGoInstallPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "tablekit")
	build := exec.Command("go", "build", "-o", bin, "github.com/tablekit/tablekit/cmd/tablekit")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("tablekit --help: %v\n%s", err, out)
	}
	for _, w := range []string{"Usage:", "tablekit [command]", "export", "import", "version", "--sas-url"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("tablekit --help lacks %q:\n%s", w, out)
		}
	}
	cmd := exec.Command(bin, "version")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	vout, err := cmd.Output()
	if err != nil {
		t.Fatalf("tablekit version: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`^tablekit (\(devel\)|v\S+) (\S+)\n$`).FindStringSubmatch(string(vout))
	if m == nil {
		t.Fatalf("tablekit version: %q", vout)
	}
	if m[2] != runtime.Version() {
		t.Errorf("tablekit version: Go %s, want %s", m[2], runtime.Version())
	}
	mod, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	want := "(devel)"
	for _, l := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/tablekit/tablekit" {
			want = f[2]
		}
	}
	if m[1] != want {
		t.Errorf("tablekit version printed %s, the binary carries %s", m[1], want)
	}
	t.Logf("%s", strings.TrimSpace(string(vout)))
}
