package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// docBlocks returns the sh blocks of docs/cli.md that run (those not
// preceded by a "not run" comment) and the plain blocks that show an
// error message tablekit prints.
func docBlocks(t *testing.T) (scripts []string, shown []string) {
	data, err := os.ReadFile("../../../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	prev := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "```") {
			lang := strings.TrimPrefix(l, "```")
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body = append(body, lines[i])
			}
			text := strings.Join(body, "\n")
			switch {
			case lang == "sh" && !strings.Contains(prev, "not run"):
				scripts = append(scripts, text)
			case lang == "" && strings.HasPrefix(text, "tablekit: "):
				shown = append(shown, text)
			}
			prev = ""
			continue
		}
		if strings.TrimSpace(l) != "" {
			prev = l
		}
	}
	return scripts, shown
}

// TestDocExamples runs every sh block of docs/cli.md, in order, in one
// shell with tablekit on the PATH (this test binary under that name), in a
// fresh folder, and checks that the error messages the page shows are the
// ones printed.
func TestDocExamples(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	scripts, shown := docBlocks(t)
	if len(scripts) < 8 || len(shown) < 2 {
		t.Fatalf("docs/cli.md: %d runnable blocks, %d shown messages", len(scripts), len(shown))
	}
	bin := t.TempDir()
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "tablekit")); err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, s := range scripts {
		script.WriteString("echo '### block " + string(rune('A'+i)) + "' >&2\n" + s + "\n")
	}
	work := t.TempDir()
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + work}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the examples failed: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	for _, s := range shown {
		if !strings.Contains(errb.String(), s) {
			t.Errorf("docs/cli.md shows\n%s\nbut the examples printed\n%s", s, errb.String())
		}
	}
	for _, want := range []string{`"resumed":9`, `"kind":"changed","pk":"cust-02","rk":"order-0001","properties":"Total: Edm.Double 2.0 -\u003e Edm.Double 200.0"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the examples' output lacks %s:\n%s", want, out.String())
		}
	}
	if testing.Verbose() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}
