package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tablekit/tablekit/internal/azuritetest"
)

// TestMain runs the command itself when the test binary is started as
// "tablekit" (the doc examples put a link of that name on PATH) or with
// TABLEKIT_CLI_MAIN=1 (the kill-and-resume test's subprocess).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "tablekit" || os.Getenv("TABLEKIT_CLI_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, os.Args[1:], Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

type result struct {
	code     int
	out, err string
}

// lines decodes the JSON lines of stdout.
func (r result) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// backend is where a test's commands run: a --local folder or Azurite.
type backend struct {
	name   string
	flags  []string // the connection flags
	prefix string   // of table names, unique per test on Azurite
	env    map[string]string
}

func (b backend) table(name string) string { return b.prefix + name }

func backends(t *testing.T) []backend {
	local := backend{name: "memstore", flags: []string{"--local", t.TempDir()}, env: map[string]string{}}
	out := []backend{local}
	if conn := os.Getenv(azuritetest.ConnEnv); conn != "" {
		f := filepath.Join(t.TempDir(), "azurite.conn")
		if err := os.WriteFile(f, []byte(conn), 0o600); err != nil {
			t.Fatal(err)
		}
		var rnd [3]byte
		rand.Read(rnd[:])
		out = append(out, backend{name: "azurite", flags: []string{"--conn-file", f}, prefix: "t" + hex.EncodeToString(rnd[:]), env: map[string]string{}})
	}
	return out
}

// eachBackend runs fn on memstore and, when TABLEKIT_AZURITE_CONN is set,
// on Azurite (the Azurite subtest skips with azuritetest's message otherwise).
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	bs := backends(t)
	for _, b := range bs {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
	if len(bs) == 1 {
		t.Run("azurite", func(t *testing.T) { azuritetest.Conn(t) })
	}
}

// run runs one command line in-process with the given environment only.
func run(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	no := false
	code := Main(context.Background(), args, Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv:         func(k string) string { return env[k] },
		StdoutTerminal: &no, StderrTerminal: &no,
	})
	return result{code, out.String(), errb.String()}
}

// cmd runs a command on the backend and checks its exit code.
func (b backend) run(t *testing.T, want int, stdin string, args ...string) result {
	t.Helper()
	r := run(t, b.env, stdin, append(append([]string{}, b.flags...), args...)...)
	if r.code != want {
		t.Fatalf("tablekit %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, want, r.out, r.err)
	}
	return r
}
