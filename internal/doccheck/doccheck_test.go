package doccheck

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside matches references a reader of the repository cannot follow:
// relative paths climbing out of it, absolute paths of a workspace,
// tracker entries ("issue 3", "issue #12" of this project), and the
// documents the project was started from.
var outside = []*regexp.Regexp{
	regexp.MustCompile(`\.\./shared`),
	regexp.MustCompile(`/work/`),
	regexp.MustCompile(`\bteam workspace\b`),
	regexp.MustCompile(`(?i)\bissues? #?[0-9]+\b`),
	regexp.MustCompile(`(?i)\bseeds? 0[0-9][0-9]\b`),
}

// external allows tracker references of other projects, named with their
// project ("Azurite issue #1929").
var external = regexp.MustCompile(`(?i)(azurite|azure|explorer|go|sdk|aztables|azcore|github)[^\s]*\s+issues? #[0-9]+`)

// TestDocsStandAlone scans every Markdown file and every Go comment of
// the repository.
func TestDocsStandAlone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs("doccheck_test.go")
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "node_modules" || name == ".git" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if path == self {
			return nil
		}
		md := strings.HasSuffix(name, ".md")
		if !md && !strings.HasSuffix(name, ".go") {
			return nil
		}
		scanned++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		s := bufio.NewScanner(f)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; s.Scan(); n++ {
			line := s.Text()
			if !md {
				i := strings.Index(line, "//")
				if i < 0 {
					continue
				}
				line = line[i:]
			}
			for _, re := range outside {
				if m := re.FindString(line); m != "" && !external.MatchString(line) {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d names %q, which a reader of the repository cannot see: %s", rel, n, m, strings.TrimSpace(line))
				}
			}
		}
		return s.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files: the walk is not covering the repository", scanned)
	}
}
