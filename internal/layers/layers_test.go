// Package layers holds a test of the module's layering: imports point
// down only (cmd and examples, then patterns, then model, then core, then
// mapper, then store; keys below all on the standard library alone), and
// the backends are imported by nobody but tests, examples, the command and
// the test kits.
package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tablekit/tablekit"

// layer returns the rank of a package path inside the module: a package
// may import only packages of a lower rank, or of its own rank when the
// rule allows it (same top folder). -1 is a package the rules do not rank.
func layer(rel string) int {
	switch {
	case rel == "keys":
		return 0
	case rel == "store" || strings.HasPrefix(rel, "store/") && !isBackend(rel) && !strings.HasPrefix(rel, "store/storetest") && !strings.HasPrefix(rel, "store/tkotel"):
		return 1
	case rel == "mapper" || strings.HasPrefix(rel, "mapper/"), rel == "encryption":
		return 2
	case strings.HasPrefix(rel, "core/"):
		return 3
	case rel == "model" || strings.HasPrefix(rel, "model/"):
		return 4
	case strings.HasPrefix(rel, "patterns/"):
		return 5
	}
	return -1
}

// isBackend reports whether rel is one of the backends (memstore,
// store/azstore and its service packages).
func isBackend(rel string) bool {
	return rel == "memstore" || strings.HasPrefix(rel, "memstore/") || rel == "store/azstore" || strings.HasPrefix(rel, "store/azstore/")
}

// mayImportBackends reports whether the (non-test) package rel may import
// a backend: the command, the examples, the test kits and the backends
// themselves.
func mayImportBackends(rel string) bool {
	for _, p := range []string{"cmd/", "examples/", "internal/", "store/storetest", "store/tkotel", "encryption/azkeyvault"} {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return isBackend(rel)
}

func TestImportsPointDown(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]map[string]bool{} // package -> module packages it imports (non-test files)
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "tools") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			if imports[dir] == nil {
				imports[dir] = map[string]bool{}
			}
			imports[dir][strings.TrimPrefix(p, module+"/")] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 20 {
		t.Fatalf("found the imports of only %d packages under %s: the walk is broken", len(imports), root)
	}
	checked := 0
	for pkg, ims := range imports {
		for im := range ims {
			checked++
			if isBackend(im) && !mayImportBackends(pkg) {
				t.Errorf("%s imports the backend %s: only tests, examples, cmd and the test kits may", pkg, im)
			}
			lp, li := layer(pkg), layer(im)
			if lp < 0 || li < 0 {
				continue
			}
			if li > lp {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports point down only (patterns -> model -> core -> mapper -> store -> keys)", pkg, lp, im, li)
			}
		}
	}
	t.Logf("%d packages, %d imports inside the module checked", len(imports), checked)
}

func TestKeysUsesOnlyTheStandardLibrary(t *testing.T) {
	files, err := filepath.Glob("../../keys/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in keys: %v", err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				t.Errorf("%s imports %s: keys depends on the standard library only", path, p)
			}
		}
	}
}
