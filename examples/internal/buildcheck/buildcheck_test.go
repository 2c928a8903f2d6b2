package buildcheck

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tablekit/tablekit"

// heavy are the import paths a program on tables alone must not link: the
// blob SDK and arrow-go, which the blob SDK brings with its compressors.
var heavy = []string{
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob",
	"github.com/apache/arrow",
}

// goCmd returns the go command, or skips the test when there is none.
func goCmd(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	return goBin
}

func linksHeavy(pkg string) bool {
	for _, h := range heavy {
		if pkg == h || strings.HasPrefix(pkg, h+"/") {
			return true
		}
	}
	return false
}

// TestQuickstartLinksNoBlobModule: the quickstart runs on memstore, or on
// Azure's Table service, and links neither the blob SDK nor arrow-go.
func TestQuickstartLinksNoBlobModule(t *testing.T) {
	out, err := exec.Command(goCmd(t), "list", "-deps", module+"/examples/quickstart").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/examples/internal/backend") {
		t.Fatalf("go list -deps ./examples/quickstart lists no examples/internal/backend: %d lines", len(deps))
	}
	for _, d := range deps {
		if linksHeavy(d) {
			t.Errorf("examples/quickstart links %s", d)
		}
	}
}

// TestOnlyBlobExamplesLinkTheBlobModule: an example links the blob SDK
// only when it imports azblobs itself; the shared backend helper never
// brings it in.
func TestOnlyBlobExamplesLinkTheBlobModule(t *testing.T) {
	out, err := exec.Command(goCmd(t), "list", "-f", "{{.ImportPath}} {{.Name}} {{join .Imports \",\"}} {{join .Deps \",\"}}", module+"/examples/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mains := 0
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		path, name, imports := f[0], f[1], strings.Split(f[2], ",")
		var deps []string
		if len(f) > 3 {
			deps = strings.Split(f[3], ",")
		}
		if name == "main" {
			mains++
		}
		if slices.Contains(imports, module+"/store/azstore/azblobs") {
			continue
		}
		for _, d := range deps {
			if linksHeavy(d) {
				t.Errorf("%s does not use blobs and links %s", strings.TrimPrefix(path, module+"/"), d)
				break
			}
		}
	}
	if mains < 10 {
		t.Fatalf("go list found %d example programs", mains)
	}
}

// TestBuiltExamplesAreIgnored: go build ./examples/NAME writes the binary
// NAME in the directory it runs in, the repository's root or the
// example's own; .gitignore ignores both, so a built binary is never
// committed.
func TestBuiltExamplesAreIgnored(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ignored []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		ignored = append(ignored, strings.TrimSpace(s.Text()))
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "internal" {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "examples", e.Name(), "main.go")); err != nil {
			continue
		}
		n++
		for _, want := range []string{"/" + e.Name(), "/examples/*/" + e.Name()} {
			if !slices.Contains(ignored, want) {
				t.Errorf(".gitignore lacks %s, the binary go build ./examples/%s writes", want, e.Name())
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d examples", n)
	}
}
