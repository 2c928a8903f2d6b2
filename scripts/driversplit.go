//go:build ignore

// driversplit rewrites the callers of the backend kit that moved from
// package store to package store/driver. scripts/driver-split.sh runs it;
// it is safe to run again: a file already rewritten has nothing left to
// change.
//
// In every Go file of the module outside package store itself and
// store/driver it:
//
//   - rewrites store.X to driver.X for each moved name X (code, comments
//     and string literals);
//   - rewrites the comma-ok probe v, ok := t.(store.TypedTable) to
//     v, ok := driver.Typed(t);
//   - adds the import of store/driver where the code now uses it, and
//     drops the import of store where nothing uses it any more.
//
// In Markdown files it rewrites store.X to driver.X for each moved name.
//
// In package store's own files it rewrites nothing (store cannot import
// driver) and reports every use of a moved name, for a person to settle.
//
// Usage: go run scripts/driversplit.go [-n] <module root>
// With -n it lists what it would change and writes nothing.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const (
	storePath  = "github.com/tablekit/tablekit/store"
	driverPath = "github.com/tablekit/tablekit/store/driver"
)

// moved lists the names that left package store for package driver under
// the same name.
var moved = []string{
	// request rules
	"ValidateGet", "ValidateFilterLength", "FilterBytes",
	"WithoutIgnored", "WithoutIgnoredActions",
	// queues and blobs
	"EncodeMessageText", "DecodeMessageText", "MessageTextSize",
	"ValidateMessageBody", "ValidateMessageCount", "ValidateVisibility", "ResolvePut",
	"ResolveBlobListSize", "ValidateAppend", "ValidateRange", "RangeNotSatisfiable",
	"ValidateAccessPolicies", "NormalizeTablePermission",
	// lost answers
	"Settle", "SettleAppend", "AmbiguousStatus",
	// continuation tokens
	"TokenScope", "SealToken", "OpenToken",
	// the typed lane
	"ReadEntity", "EntityBuilder",
	// tries
	"Try", "TryObserver", "WithTryObserver", "ReportTry", "ReportTryErr", "TryStatus",
}

var isMoved = func() map[string]bool {
	m := make(map[string]bool, len(moved))
	for _, n := range moved {
		m[n] = true
	}
	return m
}()

// prose matches store.X for a moved X in comments and string literals.
var prose = func() *regexp.Regexp {
	names := append([]string(nil), moved...)
	// Longest first, so that SettleAppend is not read as Settle.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return regexp.MustCompile(`\bstore\.(` + strings.Join(names, "|") + `)\b`)
}()

type edit struct {
	from, to int
	text     string
}

func main() {
	dry := flag.Bool("n", false, "list the changes, write nothing")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/driversplit.go [-n] <module root>")
		os.Exit(2)
	}
	root := flag.Arg(0)
	if err := loadStoreDecls(root); err != nil {
		fmt.Fprintln(os.Stderr, "driversplit:", err)
		os.Exit(1)
	}
	changed, problems := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(path, ".md") {
			did, err := rewriteText(path, rel, *dry)
			if did {
				changed++
			}
			return err
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		if strings.HasPrefix(rel, "store/driver/") || rel == "scripts/driversplit.go" {
			return nil
		}
		did, n, err := rewrite(path, rel, *dry)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		if did {
			changed++
		}
		problems += n
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "driversplit:", err)
		os.Exit(1)
	}
	verb := "rewrote"
	if *dry {
		verb = "would rewrite"
	}
	fmt.Printf("driversplit: %s %d files\n", verb, changed)
	if problems > 0 {
		fmt.Printf("driversplit: %d uses of moved names in package store need a person (see above)\n", problems)
		os.Exit(3)
	}
}

// rewrite rewrites one file; it reports whether it changed it and how
// many uses it could not rewrite.
func rewrite(path, rel string, dry bool) (bool, int, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, 0, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return false, 0, err
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }

	if f.Name.Name == "store" && filepath.ToSlash(filepath.Dir(rel)) == "store" {
		return false, reportInStore(fset, f, rel), nil
	}

	local := importName(f, storePath, "store")
	var edits []edit
	if local != "" {
		if declares(f, "driver") {
			fmt.Printf("%s: declares or uses its own name driver: rewrite it by hand\n", rel)
			return false, 1, nil
		}
		isStore := func(e ast.Expr, name string) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			id, ok := sel.X.(*ast.Ident)
			return ok && id.Name == local && id.Obj == nil && (name == "" || sel.Sel.Name == name)
		}
		probe := func(rhs ast.Expr) {
			ta, ok := rhs.(*ast.TypeAssertExpr)
			if !ok || !isStore(ta.Type, "TypedTable") {
				return
			}
			x := string(src[off(ta.X.Pos()):off(ta.X.End())])
			edits = append(edits, edit{off(ta.Pos()), off(ta.End()), "driver.Typed(" + x + ")"})
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Lhs) == 2 && len(n.Rhs) == 1 {
					probe(n.Rhs[0])
				}
			case *ast.ValueSpec:
				if len(n.Names) == 2 && len(n.Values) == 1 {
					probe(n.Values[0])
				}
			case *ast.SelectorExpr:
				if isStore(n, "") && isMoved[n.Sel.Name] {
					edits = append(edits, edit{off(n.Pos()), off(n.End()), "driver." + n.Sel.Name})
				}
			}
			return true
		})
	}
	// Comments and string literals name the moved functions too.
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if t := prose.ReplaceAllString(c.Text, "driver.$1"); t != c.Text {
				edits = append(edits, edit{off(c.Pos()), off(c.End()), t})
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if t := prose.ReplaceAllString(lit.Value, "driver.$1"); t != lit.Value {
				edits = append(edits, edit{off(lit.Pos()), off(lit.End()), t})
			}
		}
		return true
	})
	if len(edits) == 0 {
		return false, 0, nil
	}
	out := apply(src, edits)
	out, err = fixImports(out, local)
	if err != nil {
		return false, 0, err
	}
	if bytes.Equal(out, src) {
		return false, 0, nil
	}
	fmt.Printf("%s: %d changes\n", rel, len(edits))
	if dry {
		return true, 0, nil
	}
	return true, 0, os.WriteFile(path, out, 0o644)
}

// rewriteText rewrites store.X to driver.X for the moved names in a
// Markdown file.
func rewriteText(path, rel string, dry bool) (bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	out := prose.ReplaceAll(src, []byte("driver.$1"))
	if bytes.Equal(out, src) {
		return false, nil
	}
	fmt.Printf("%s: %d mentions\n", rel, len(prose.FindAll(src, -1)))
	if dry {
		return true, nil
	}
	return true, os.WriteFile(path, out, 0o644)
}

// apply makes the edits, which do not overlap (an assertion's selector
// lies inside the assertion: the outer edit wins).
func apply(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].from != edits[j].from {
			return edits[i].from < edits[j].from
		}
		return edits[i].to > edits[j].to
	})
	var b bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.from < at {
			continue // inside an edit already made
		}
		b.Write(src[at:e.from])
		b.WriteString(e.text)
		at = e.to
	}
	b.Write(src[at:])
	return b.Bytes()
}

// fixImports adds the import of driver where the code uses driver. and
// removes the import of store where nothing uses it, then formats.
func fixImports(src []byte, local string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("after the rewrite: %w", err)
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	uses := func(name string) bool {
		found := false
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && id.Obj == nil {
					found = true
				}
			}
			return !found
		})
		return found
	}
	needDriver := uses("driver") && importName(f, driverPath, "driver") == ""
	dropStore := local != "" && !uses(local)
	spec := importSpec(f, storePath)
	var edits []edit
	switch {
	case spec == nil && needDriver:
		return nil, fmt.Errorf("uses driver but imports no store to put its import beside")
	case spec == nil:
	case needDriver && dropStore:
		// The file now uses driver alone: the store import becomes driver's.
		edits = append(edits, edit{off(spec.Pos()), off(spec.End()), strconv.Quote(driverPath)})
	case needDriver:
		decl := importDecl(f, spec)
		if decl.Lparen.IsValid() {
			edits = append(edits, edit{off(spec.End()), off(spec.End()), "\n\t" + strconv.Quote(driverPath)})
		} else {
			edits = append(edits, edit{off(decl.Pos()), off(decl.End()),
				"import (\n\t" + specText(src, fset, spec) + "\n\t" + strconv.Quote(driverPath) + "\n)"})
		}
	case dropStore:
		decl := importDecl(f, spec)
		if decl.Lparen.IsValid() {
			edits = append(edits, edit{lineStart(src, off(spec.Pos())), lineEnd(src, off(spec.End())), ""})
		} else {
			edits = append(edits, edit{off(decl.Pos()), off(decl.End()), ""})
		}
	}
	if len(edits) > 0 {
		src = apply(src, edits)
	}
	return format.Source(src)
}

// importName returns the name a file gives the import of path, or "".
func importName(f *ast.File, path, def string) string {
	spec := importSpec(f, path)
	if spec == nil {
		return ""
	}
	if spec.Name != nil {
		return spec.Name.Name
	}
	return def
}

func importSpec(f *ast.File, path string) *ast.ImportSpec {
	for _, s := range f.Imports {
		if p, _ := strconv.Unquote(s.Path.Value); p == path {
			return s
		}
	}
	return nil
}

func importDecl(f *ast.File, spec *ast.ImportSpec) *ast.GenDecl {
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			for _, s := range g.Specs {
				if s == spec {
					return g
				}
			}
		}
	}
	return nil
}

func specText(src []byte, fset *token.FileSet, spec *ast.ImportSpec) string {
	return string(src[fset.Position(spec.Pos()).Offset:fset.Position(spec.End()).Offset])
}

func lineStart(src []byte, i int) int {
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return i
}

func lineEnd(src []byte, i int) int {
	for i < len(src) && src[i] != '\n' {
		i++
	}
	if i < len(src) {
		i++
	}
	return i
}

// declares reports whether the file has an identifier driver of its own,
// which the import would collide with.
func declares(f *ast.File, name string) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found && importName(f, driverPath, name) == ""
}

// storeDecls holds the top-level names package store declares, in all
// its files: a use of a moved name that store still declares (its own
// copy, before the copies go) needs nothing.
var storeDecls map[string]bool

func loadStoreDecls(root string) error {
	storeDecls = map[string]bool{}
	files, err := filepath.Glob(filepath.Join(root, "store", "*.go"))
	if err != nil {
		return err
	}
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name != "store" {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					storeDecls[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						storeDecls[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							storeDecls[n.Name] = true
						}
					}
				}
			}
		}
	}
	return nil
}

// reportInStore lists the uses of moved names in a file of package store
// that store no longer declares: store cannot import driver, so each needs
// a person (keep the function in store, or move the caller).
func reportInStore(fset *token.FileSet, f *ast.File, rel string) int {
	sels := map[*ast.Ident]bool{}
	ast.Inspect(f, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.SelectorExpr:
			sels[x.Sel] = true
		case *ast.KeyValueExpr:
			if id, ok := x.Key.(*ast.Ident); ok {
				sels[id] = true // a field name in a composite literal
			}
		}
		return true
	})
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		id, ok := node.(*ast.Ident)
		if !ok || sels[id] || !isMoved[id.Name] || storeDecls[id.Name] {
			return true
		}
		fmt.Printf("%s: uses %s, which moved to store/driver\n", fset.Position(id.Pos()), id.Name)
		n++
		return true
	})
	return n
}
