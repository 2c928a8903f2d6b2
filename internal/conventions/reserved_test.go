// Package conventions holds tests of the module's conventions that no
// single package can check: every property name tablekit stores starts
// with store.ReservedPrefix, the key types are one, and the cleanup jobs
// have one shape (docs/patterns/README.md, Conventions).
package conventions

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tablekit/tablekit/store"
)

const module = "github.com/tablekit/tablekit"

// stores are the folders of the packages that store properties of their
// own: the contract, the mapper, encryption, the core, the model and the
// patterns, each with the folders below it but store's (the backends,
// the wire format and the test kits keep the properties they are given).
var stores = []string{"store", "mapper", "encryption", "core", "model", "patterns", "internal/claims"}

// notOurs are the property names those packages use that tablekit did not
// choose, with the reason.
var notOurs = map[string]string{
	"PartitionKey":               "the service's own property",
	"RowKey":                     "the service's own property",
	store.TimestampProperty:      "the service's own property",
	"_ClientEncryptionMetadata1": "the legacy encryption format's, chosen by the libraries that wrote it",
	"_ClientEncryptionMetadata2": "the legacy encryption format's, chosen by the libraries that wrote it",
}

// namedLikeAProperty matches the name of a constant that holds a property
// name or the prefix of some: propVersion, countProp, RefProperty,
// BlobPropertyPrefix, linePropPrefix, HeadPrefix. A constant of the packages above that
// names a property is named so, which lets this test find it wherever
// it is used.
var namedLikeAProperty = regexp.MustCompile(`^prop(Prefix$|[A-Z])|Prop$|Property$|Prop(erty)?Prefix$|[hH]eadPrefix$`)

// TestReservedPropertyNames: every property name tablekit stores starts
// with store.ReservedPrefix. It type-checks the packages that store
// properties of their own and looks at two things:
//
//   - every constant named like a property name (namedLikeAProperty),
//     exported or not;
//   - every constant used where a property name goes: a key of a
//     map[string]any literal, an index into or a delete from a
//     map[string]any (an entity's Properties), filter.Prop's argument, an
//     element of a Select list, partition.Options.HeadPrefix; of a sum
//     ("TkDnSrc_" + name) the leading constant.
//
// Names tablekit did not choose (notOurs) are let through. It also checks
// that the prefix is spelled once: no string literal "Tk" outside the
// declaration of store.ReservedPrefix, so every test of a name goes
// through store.ReservedPrefix or store.ReservedProperty.
func TestReservedPropertyNames(t *testing.T) {
	pkgs := load(t)
	named, used := map[string]string{}, map[string]string{} // value -> where
	for _, p := range pkgs {
		for _, f := range p.files {
			checkFile(t, p, f, named, used)
		}
	}
	for _, found := range []struct {
		what string
		m    map[string]string
		min  int
	}{{"constants named like a property", named, 35}, {"constant property names in use", used, 30}} {
		if len(found.m) < found.min {
			t.Errorf("found %d %s, fewer than %d: the walk is broken", len(found.m), found.what, found.min)
		}
		names := make([]string, 0, len(found.m))
		for v := range found.m {
			names = append(names, v)
		}
		slices.Sort(names)
		t.Logf("%d %s: %s", len(names), found.what, strings.Join(names, " "))
	}
}

// checkFile checks the property names of one file; named and used
// collect what it found, each value with where.
func checkFile(t *testing.T, p *pkg, f *ast.File, named, used map[string]string) {
	at := func(n ast.Node) string {
		pos := p.fset.Position(n.Pos())
		rel, _ := filepath.Rel(p.root, pos.Filename)
		return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line)
	}
	check := func(n ast.Node, what, v string, found map[string]string) {
		if _, ok := notOurs[v]; ok {
			return
		}
		found[v] = at(n)
		if !store.ReservedProperty(v) {
			t.Errorf("%s: %s %q does not start with %q (store.ReservedPrefix): every property name tablekit stores does", at(n), what, v, store.ReservedPrefix)
		}
	}
	// use checks an expression in a property name's place.
	use := func(e ast.Expr, where string) {
		if v, ok := leading(p.info, e); ok {
			check(e, "the property name "+where, v, used)
		}
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, id := range s.(*ast.ValueSpec).Names {
				c, ok := p.info.Defs[id].(*types.Const)
				if !ok || c.Val().Kind() != constant.String || !namedLikeAProperty.MatchString(id.Name) {
					continue
				}
				check(id, "constant "+id.Name, constant.StringVal(c.Val()), named)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING && n.Value == `"`+store.ReservedPrefix+`"` && !(p.path == module+"/store" && strings.HasSuffix(p.fset.Position(n.Pos()).Filename, "reserved.go")) {
				t.Errorf("%s: the literal %s: write store.ReservedPrefix (or store.ReservedProperty), spelled once", at(n), n.Value)
			}
		case *ast.CompositeLit:
			tv := p.info.TypeOf(n)
			if tv == nil {
				return true
			}
			if isProps(tv) {
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						use(kv.Key, "of a map[string]any literal")
					}
				}
			}
			if st, ok := tv.Underlying().(*types.Struct); ok {
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					id, ok := kv.Key.(*ast.Ident)
					if !ok {
						continue
					}
					switch {
					case id.Name == "Select" && hasField(st, "Select"):
						if l, ok := kv.Value.(*ast.CompositeLit); ok {
							for _, el := range l.Elts {
								use(el, "in a Select list")
							}
						}
					case id.Name == "HeadPrefix" && named_(tv, "core/partition", "Options"):
						use(kv.Value, "of Options.HeadPrefix")
					}
				}
			}
		case *ast.IndexExpr:
			if tv := p.info.TypeOf(n.X); tv != nil && isProps(tv) {
				use(n.Index, "indexing a map[string]any")
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "delete" && len(n.Args) == 2 {
				if tv := p.info.TypeOf(n.Args[0]); tv != nil && isProps(tv) {
					use(n.Args[1], "deleted from a map[string]any")
				}
			}
			if fn := callee(p.info, n); fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == module+"/store/filter" && fn.Name() == "Prop" && len(n.Args) == 1 {
				use(n.Args[0], "of filter.Prop")
			}
		}
		return true
	})
}

// leading returns the constant string e is, or starts with: of a sum, its
// leftmost constant operand.
func leading(info *types.Info, e ast.Expr) (string, bool) {
	if tv, ok := info.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
		return constant.StringVal(tv.Value), true
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return leading(info, e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return leading(info, e.X)
		}
	}
	return "", false
}

// isProps reports a map with string keys and values of any type: an
// entity's properties.
func isProps(t types.Type) bool {
	m, ok := t.Underlying().(*types.Map)
	if !ok {
		return false
	}
	k, ok := m.Key().Underlying().(*types.Basic)
	if !ok || k.Kind() != types.String {
		return false
	}
	i, ok := m.Elem().Underlying().(*types.Interface)
	return ok && i.Empty()
}

func hasField(st *types.Struct, name string) bool {
	for f := range st.Fields() {
		if f.Name() == name {
			return true
		}
	}
	return false
}

// named_ reports whether t is the named type name of the module's package
// rel.
func named_(t types.Type, rel, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == name && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == module+"/"+rel
}

// callee returns the function a call calls, when it is a named one.
func callee(info *types.Info, c *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := c.Fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	return fn
}

// pkg is a type-checked package of the module (non-test files).
type pkg struct {
	path  string
	root  string
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
}

// load type-checks the packages under stores from source (their module
// imports from source too, the standard library from export data).
func load(t *testing.T) []*pkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	l := &loader{root: root, fset: fset, std: stdImporter(t, root, fset), done: map[string]*pkg{}, types: map[string]*types.Package{}}
	var out []*pkg
	for _, dir := range stores {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, path)
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || name == "azkeyvault" || dir == "store" && rel != "store" {
				return filepath.SkipDir
			}
			p, err := l.load(module + "/" + filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			if p != nil {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 15 {
		t.Fatalf("type-checked only %d packages: the walk is broken", len(out))
	}
	return out
}

// stdImporter imports the standard library from the export data the go
// command keeps (two go list calls for all of it, rather than one per
// package).
func stdImporter(t *testing.T, root string, fset *token.FileSet) types.Importer {
	t.Helper()
	args := []string{"list", "-deps", "-f", "{{if .Standard}}{{.ImportPath}}{{end}}"}
	for _, dir := range stores {
		args = append(args, "./"+dir+"/...")
	}
	std := strings.Fields(goCmd(t, root, args...))
	exports := map[string]string{}
	for line := range strings.Lines(goCmd(t, root, append([]string{"list", "-export", "-f", "{{.ImportPath}} {{.Export}}"}, std...)...)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s: the packages checked import only the standard library and the module", path)
		}
		return os.Open(file)
	})
}

// goCmd runs the go command in root and returns its output.
func goCmd(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// loader type-checks the module's packages from source, each once.
type loader struct {
	root  string
	fset  *token.FileSet
	std   types.Importer
	done  map[string]*pkg
	types map[string]*types.Package
}

// Import implements types.Importer.
func (l *loader) Import(path string) (*types.Package, error) {
	if !strings.HasPrefix(path, module+"/") {
		return l.std.Import(path)
	}
	if _, err := l.load(path); err != nil {
		return nil, err
	}
	if tp := l.types[path]; tp != nil {
		return tp, nil
	}
	return nil, fmt.Errorf("package %s has no Go files", path)
}

// load type-checks package path; nil for a folder without Go files.
func (l *loader) load(path string) (*pkg, error) {
	if p, ok := l.done[path]; ok {
		return p, nil
	}
	dir := filepath.Join(l.root, filepath.FromSlash(strings.TrimPrefix(path, module+"/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(l.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if !buildable(f) {
			continue
		}
		files = append(files, f)
	}
	l.done[path] = nil
	if len(files) == 0 {
		return nil, nil
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: l}
	tp, err := conf.Check(path, l.fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	p := &pkg{path: path, root: l.root, fset: l.fset, files: files, info: info}
	l.done[path], l.types[path] = p, tp
	return p, nil
}

// buildable leaves out the files of other platforms and of build tags
// the module uses for tests alone (a file with a //go:build line is kept
// only for linux or unix).
func buildable(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if expr, ok := strings.CutPrefix(c.Text, "//go:build "); ok {
				return strings.Contains(expr, "linux") || strings.Contains(expr, "unix") || strings.HasPrefix(expr, "!")
			}
		}
	}
	return true
}
