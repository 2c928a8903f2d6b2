package keys

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryExportedFunctionHasAnExample enforces the rule that
// every function (and method) has a doc comment and an Example: it reads
// the package source and the example files.
func TestEveryExportedFunctionHasAnExample(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	want := map[string]bool{} // Example name -> documented function
	examples := map[string]bool{}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			if strings.HasSuffix(name, "_test.go") {
				if strings.HasPrefix(fn.Name.Name, "Example") {
					examples[fn.Name.Name] = true
				}
				continue
			}
			ex := "Example" + fn.Name.Name
			if fn.Recv != nil {
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				ex = "Example" + typ.(*ast.Ident).Name + "_" + fn.Name.Name
			}
			if fn.Doc == nil || !strings.HasPrefix(fn.Doc.Text(), fn.Name.Name+" ") {
				t.Errorf("%s: %s has no doc comment starting with its name", name, fn.Name.Name)
			}
			want[ex] = true
		}
	}
	if len(want) < 30 {
		t.Fatalf("found only %d exported functions: is the parser reading the package?", len(want))
	}
	for ex := range want {
		if !examples[ex] {
			t.Errorf("missing %s", ex)
		}
	}
}
