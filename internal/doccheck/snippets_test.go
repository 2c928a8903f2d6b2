package doccheck

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The Go snippets of README.md and docs/ compile against the current API.
//
// A block fenced as ```go is either a whole file (it starts with a package
// clause) or a fragment. A fragment's type and func declarations and its
// imports stay at file level; every other line (statements, var and const
// declarations) becomes the body of a function. The snippets of one
// Markdown file share one package, so a type one snippet declares serves
// the next. The imports a fragment needs are added from knownImports.
//
// A fragment that uses names it does not declare says what they are in an
// HTML comment right above the block (a reader of the rendered page does
// not see it):
//
//	<!-- snippet: func(ctx context.Context, st store.Store) error
//	type Review struct{ Dept, Employee string }
//	-->
//
// The first line, after "snippet:", is the signature of the function the
// fragment's statements form the body of (func() when absent); a result
// lets the fragment return. Further lines before --> are declarations
// added at file level. A variable a fragment declares and does not use is
// not an error, as it would be in a real function: a snippet shows a call
// and what it returns.
//
// A block that is not meant to compile is fenced as text, not go.

const module = "github.com/tablekit/tablekit"

// knownImports maps the package names the docs use to import paths; the
// patterns' packages are added from the patterns directory.
var knownImports = map[string]string{
	"bytes":      "bytes",
	"context":    "context",
	"errors":     "errors",
	"fmt":        "fmt",
	"http":       "net/http",
	"io":         "io",
	"iter":       "iter",
	"json":       "encoding/json",
	"log":        "log",
	"math":       "math",
	"os":         "os",
	"slices":     "slices",
	"sort":       "sort",
	"strconv":    "strconv",
	"strings":    "strings",
	"sync":       "sync",
	"atomic":     "sync/atomic",
	"testing":    "testing",
	"time":       "time",
	"azcore":     "github.com/Azure/azure-sdk-for-go/sdk/azcore",
	"azidentity": "github.com/Azure/azure-sdk-for-go/sdk/azidentity",
	"keys":       module + "/keys",
	"encryption": module + "/encryption",
	"azkeyvault": module + "/encryption/azkeyvault",
	"azkeys":     "github.com/Azure/azure-sdk-for-go/sdk/security/keyvault/azkeys",
	"mapper":     module + "/mapper",
	"memstore":   module + "/memstore",
	"model":      module + "/model",
	"store":      module + "/store",
	"filter":     module + "/store/filter",
	"storetest":  module + "/store/storetest",
	"driver":     module + "/store/driver",
	"azstore":    module + "/store/azstore",
	"azblobs":    module + "/store/azstore/azblobs",
	"azqueues":   module + "/store/azstore/azqueues",
}

// snippet is one ```go block.
type snippet struct {
	file  string // slash path from the repository's root
	line  int    // line of the block's first code line
	code  string
	sig   string // the directive's signature, "" for func()
	decls string // the directive's file-level declarations
	dline int    // line of the directive
}

var directive = regexp.MustCompile(`^<!--\s*snippet:(.*)$`)

// extract returns the ```go blocks of a Markdown file.
func extract(rel, text string) ([]snippet, error) {
	lines := strings.Split(text, "\n")
	var out []snippet
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
		indent := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
		start := i + 1
		j := start
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fence is never closed", rel, i+1)
		}
		if lang == "go" {
			var code []string
			for _, l := range lines[start:j] {
				code = append(code, strings.TrimPrefix(l, indent))
			}
			s := snippet{file: rel, line: start + 1, code: strings.Join(code, "\n") + "\n"}
			if err := s.readDirective(lines[:i]); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		i = j
	}
	return out, nil
}

// readDirective reads the snippet comment right above the block, if any.
func (s *snippet) readDirective(above []string) error {
	end := len(above) - 1
	for end >= 0 && strings.TrimSpace(above[end]) == "" {
		end--
	}
	if end < 0 || !strings.HasSuffix(strings.TrimSpace(above[end]), "-->") {
		return nil
	}
	begin := end
	for begin >= 0 && !strings.HasPrefix(strings.TrimSpace(above[begin]), "<!--") {
		begin--
	}
	if begin < 0 {
		return nil
	}
	m := directive.FindStringSubmatch(strings.TrimSpace(above[begin]))
	if m == nil {
		return nil
	}
	var body []string
	for k := begin; k <= end; k++ {
		l := above[k]
		if k == begin {
			l = m[1]
		}
		if k == end {
			l = strings.TrimSuffix(strings.TrimRight(l, " \t"), "-->")
		}
		body = append(body, l)
	}
	s.sig = strings.TrimSpace(body[0])
	s.dline = begin + 1
	if len(body) > 1 {
		s.decls = strings.Join(body[1:], "\n") + "\n"
	}
	if s.sig != "" && !strings.HasPrefix(s.sig, "func(") {
		return fmt.Errorf("%s:%d: a snippet comment starts with a signature func(...), not %q", s.file, s.dline, s.sig)
	}
	return nil
}

// isFile reports whether the snippet is a whole Go file.
func (s *snippet) isFile() bool {
	for l := range strings.Lines(s.code) {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		return strings.HasPrefix(l, "package ")
	}
	return false
}

// chunk is a run of lines starting at column 0 with what follows it
// indented (or closing it), with the comments above it.
type chunk struct {
	line int // of its first line in the Markdown file
	text string
	decl bool // a type, func or import declaration: file level
}

func chunks(s *snippet) []chunk {
	var out []chunk
	var cur *chunk
	pending, pendingLine := "", 0
	for n, l := range strings.Split(strings.TrimRight(s.code, "\n"), "\n") {
		line := s.line + n
		top := l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != '}' && l[0] != ')' && l[0] != ']'
		switch {
		case top && strings.HasPrefix(l, "//"):
			if pending == "" {
				pendingLine = line
			}
			pending += l + "\n"
			continue
		case top:
			c := chunk{line: line, text: pending + l + "\n"}
			if pending != "" {
				c.line = pendingLine
			}
			pending = ""
			c.decl = strings.HasPrefix(l, "type ") || strings.HasPrefix(l, "import ") ||
				(strings.HasPrefix(l, "func ") && !strings.HasPrefix(l, "func ()"))
			out = append(out, c)
			cur = &out[len(out)-1]
		case cur != nil && pending == "":
			cur.text += l + "\n"
		default:
			if pending == "" {
				pendingLine = line
			}
			pending += l + "\n"
		}
	}
	if pending != "" {
		out = append(out, chunk{line: pendingLine, text: pending})
	}
	return out
}

func lineDirective(file string, line int) string {
	return fmt.Sprintf("//line %s:%d\n", file, line)
}

// generate returns the Go file for a fragment: its declarations, the
// function its statements form, the imports it needs and a use of each
// variable it declares.
func generate(s *snippet, pkg string, imports map[string]string) (string, error) {
	var decls, body strings.Builder
	if s.decls != "" {
		decls.WriteString(lineDirective(s.file, s.dline+1) + s.decls)
	}
	for _, c := range chunks(s) {
		if c.decl {
			decls.WriteString(lineDirective(s.file, c.line) + c.text)
		} else {
			body.WriteString(lineDirective(s.file, c.line) + c.text)
		}
	}
	var src strings.Builder
	src.WriteString("package " + pkg + "\n\n")
	src.WriteString(decls.String())
	results := false
	if body.Len() > 0 {
		sig := s.sig
		if sig == "" {
			sig = "func()"
		}
		ft, err := parser.ParseExpr(sig)
		if err != nil {
			return "", fmt.Errorf("%s:%d: the snippet comment's signature: %v", s.file, s.dline, err)
		}
		f, ok := ft.(*ast.FuncType)
		if !ok {
			return "", fmt.Errorf("%s:%d: the snippet comment's signature is not a function type", s.file, s.dline)
		}
		results = f.Results != nil && len(f.Results.List) > 0
		src.WriteString("\n" + lineDirective(s.file, max(s.dline, s.line-1)) + "func _" + strings.TrimPrefix(sig, "func") + " {\n")
		src.WriteString(body.String())
		if results {
			src.WriteString("\tpanic(\"the end of the snippet\")\n")
		}
		src.WriteString("}\n")
	}
	text := src.String()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "snippet.go", text, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	text = useDeclared(fset, file, text)
	var paths []string
	for name := range neededPackages(file) {
		if p, ok := imports[name]; ok {
			paths = append(paths, fmt.Sprintf("%s %q", name, p))
		}
	}
	sort.Strings(paths)
	if len(paths) == 0 {
		return text, nil
	}
	head := "package " + pkg + "\n\n"
	return head + "import (\n\t" + strings.Join(paths, "\n\t") + "\n)\n\n" + strings.TrimPrefix(text, head), nil
}

// neededPackages returns the names used as X in X.Sel that the file does
// not declare itself and does not import.
func neededPackages(file *ast.File) map[string]bool {
	declared := map[string]bool{}
	for _, imp := range file.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		declared[name] = true
	}
	def := func(ids ...*ast.Ident) {
		for _, id := range ids {
			if id != nil {
				declared[id.Name] = true
			}
		}
	}
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						def(id)
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				if id, ok := n.Key.(*ast.Ident); ok {
					def(id)
				}
				if id, ok := n.Value.(*ast.Ident); ok {
					def(id)
				}
			}
		case *ast.ValueSpec:
			def(n.Names...)
		case *ast.TypeSpec:
			def(n.Name)
		case *ast.Field:
			def(n.Names...)
		}
		return true
	})
	for name := range used {
		if declared[name] {
			delete(used, name)
		}
	}
	return used
}

// useDeclared adds "_ = x" after each variable the fragment declares, on
// the same line, so that a snippet may show a result it does not use.
func useDeclared(fset *token.FileSet, file *ast.File, text string) string {
	type insert struct {
		at   int
		text string
	}
	var ins []insert
	off := func(p token.Pos) int { return fset.File(p).Offset(p) }
	uses := func(ids []*ast.Ident) string {
		var b strings.Builder
		for _, id := range ids {
			if id != nil && id.Name != "_" {
				b.WriteString("; _ = " + id.Name)
			}
		}
		return b.String()
	}
	defined := func(s ast.Stmt) []*ast.Ident {
		var ids []*ast.Ident
		switch s := s.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, e := range s.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						ids = append(ids, id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					ids = append(ids, sp.(*ast.ValueSpec).Names...)
				}
			}
		}
		return ids
	}
	atBlock := func(b *ast.BlockStmt, ids []*ast.Ident) {
		if u := uses(ids); u != "" && b != nil {
			ins = append(ins, insert{off(b.Lbrace) + 1, strings.TrimPrefix(u, "; ") + ";"})
		}
	}
	list := func(stmts []ast.Stmt) {
		for _, s := range stmts {
			if u := uses(defined(s)); u != "" {
				ins = append(ins, insert{off(s.End()), u})
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			list(n.List)
		case *ast.CaseClause:
			list(n.Body)
		case *ast.CommClause:
			list(n.Body)
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				var ids []*ast.Ident
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						ids = append(ids, id)
					}
				}
				atBlock(n.Body, ids)
			}
		case *ast.IfStmt:
			if n.Init != nil {
				atBlock(n.Body, defined(n.Init))
			}
		case *ast.ForStmt:
			if n.Init != nil {
				atBlock(n.Body, defined(n.Init))
			}
		case *ast.SwitchStmt:
			if n.Init != nil {
				for _, c := range n.Body.List {
					cc := c.(*ast.CaseClause)
					if u := uses(defined(n.Init)); u != "" {
						ins = append(ins, insert{off(cc.Colon) + 1, " " + strings.TrimPrefix(u, "; ") + ";"})
					}
				}
			}
		case *ast.TypeSwitchStmt:
			ids := defined(n.Assign)
			if n.Init != nil {
				ids = append(ids, defined(n.Init)...)
			}
			if u := uses(ids); u != "" {
				for _, c := range n.Body.List {
					cc := c.(*ast.CaseClause)
					ins = append(ins, insert{off(cc.Colon) + 1, " " + strings.TrimPrefix(u, "; ") + ";"})
				}
			}
		}
		return true
	})
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].at > ins[j].at })
	for _, in := range ins {
		text = text[:in.at] + in.text + text[in.at:]
	}
	return text
}

// patternImports adds the packages under patterns/ and core/ to knownImports.
func patternImports(t *testing.T, root string) map[string]string {
	m := map[string]string{}
	for k, v := range knownImports {
		m[k] = v
	}
	for _, dir := range []string{"patterns", "core"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != "internal" {
				m[e.Name()] = module + "/" + dir + "/" + e.Name()
			}
		}
	}
	return m
}

// markdown returns README.md and every Markdown file under docs/.
func markdown(t *testing.T, root string) []string {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGoSnippetsCompile builds every Go snippet of README.md and docs/ in
// one go build: each Markdown file is a package of generated files, given
// to the go command as an overlay, so nothing is written in the
// repository. Errors name the Markdown file and line.
func TestGoSnippetsCompile(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := patternImports(t, root)
	tmp := t.TempDir()
	overlay := map[string]string{}
	var pkgs []string
	count := 0
	virtual := filepath.Join(root, "internal", "doccheck", "snippets")
	for _, md := range markdown(t, root) {
		text, err := os.ReadFile(filepath.Join(root, md))
		if err != nil {
			t.Fatal(err)
		}
		snippets, err := extract(md, string(text))
		if err != nil {
			t.Error(err)
			continue
		}
		dir := strings.NewReplacer("/", "_", ".", "_", "-", "_").Replace(strings.ToLower(strings.TrimSuffix(md, ".md")))
		for i, s := range snippets {
			count++
			pkgDir, src := dir, ""
			if s.isFile() {
				pkgDir = fmt.Sprintf("%s_%d", dir, i+1)
				src = lineDirective(s.file, s.line) + s.code
			} else {
				src, err = generate(&s, "snippets", imports)
				if err != nil {
					t.Error(err)
					continue
				}
			}
			name := fmt.Sprintf("snippet%02d.go", i+1)
			gen := filepath.Join(tmp, pkgDir+"_"+name)
			if err := os.WriteFile(gen, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay[filepath.Join(virtual, pkgDir, name)] = gen
			if p := "./internal/doccheck/snippets/" + pkgDir; !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	if count < 40 {
		t.Fatalf("found %d Go snippets: the extraction is not covering the docs", count)
	}
	data, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, append([]string{"build", "-overlay", ov}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%d Go snippets in %d packages; go build: %v\n%s", count, len(pkgs), err, out)
	}
}
