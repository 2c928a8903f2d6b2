// Package cli is the tablekit operator command: its subcommands, flags,
// environment variables, connections and output. Main runs one command
// line and returns the exit code: 0 done, 1 failed, 2 usage.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Env is what a command line runs with; tests give their own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable (os.Getenv when nil).
	Getenv func(string) string
	// Credential makes the credential of --account (azidentity's default
	// credential when nil).
	Credential func() (azcore.TokenCredential, error)
	// Transport replaces the HTTP client of the Azure backend (tests: a
	// TLS server on loopback).
	Transport policy.Transporter
	// StdoutTerminal and StderrTerminal override terminal detection
	// (nil: detect on *os.File).
	StdoutTerminal, StderrTerminal *bool
}

// usageError is a command line that cannot run: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// failed reports a failure already explained on stderr: exit code 1
// without another message.
var errReported = errors.New("failed")

func isTerminal(w io.Writer, override *bool) bool {
	if override != nil {
		return *override
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Main runs the command line args and returns the exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	a := &app{env: env, ctx: ctx}
	root := a.root()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	for _, c := range a.closers {
		c()
	}
	if err == nil {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(env.Stderr, "tablekit: %v\nRun 'tablekit --help' or 'tablekit COMMAND --help' for usage.\n", err)
		return ExitUsage
	}
	if !errors.Is(err, errReported) {
		fmt.Fprintf(env.Stderr, "tablekit: %v\n", err)
	}
	return ExitFailure
}

// isCobraUsage recognizes cobra's own command-line errors.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") || strings.Contains(s, "flag needs an argument") ||
		strings.HasPrefix(s, "invalid argument")
}

// nArgs accepts between lo and hi positional arguments (hi -1: any).
func nArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			want := fmt.Sprintf("%d", lo)
			switch {
			case hi < 0:
				want = fmt.Sprintf("at least %d", lo)
			case hi != lo:
				want = fmt.Sprintf("%d to %d", lo, hi)
			}
			return usagef("%s takes %s argument(s), got %d: usage: %s", cmd.CommandPath(), want, len(args), cmd.UseLine())
		}
		return nil
	}
}

type app struct {
	env Env
	ctx context.Context

	// global flags
	src    connFlags
	output string
	quiet  bool

	closers []func() // run when the command ends: the local folders' locks
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "tablekit",
		Short: "Operate Azure Table storage: look, write, export, import, copy, verify, back up",
		Long: `tablekit operates Azure Table storage accounts (or a local folder, for tests and
offline work): list and create tables, read and query entities, write one
entity with its ETag, export and import files, copy and verify tables, back up
and restore whole accounts.

Connect with one of:
  --conn STRING        a storage connection string (better: --conn-file or the
                       environment variable TABLEKIT_CONN or
                       AZURE_STORAGE_CONNECTION_STRING, which keep it out of
                       the process list and the shell history)
  --account NAME       Microsoft Entra ID through azidentity's default
                       credential (az login, managed identity, environment)
  --sas-url URL        a Table service URL with a SAS (or TABLEKIT_SAS_URL)
  --local DIR          a local store in a folder (TABLEKIT_LOCAL)

Output: aligned tables on a terminal, JSON lines in a pipe; --output csv for CSV.
Exit codes: 0 done, 1 failed, 2 usage.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	a.src.register(pf, "")
	pf.StringVarP(&a.output, "output", "o", "auto", "output format: auto (table on a terminal, jsonl in a pipe), table, jsonl or csv")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "no progress bar and no summary on stderr")
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(a.tablesCmd(), a.getCmd(), a.queryCmd(), a.countCmd(),
		a.writeCmd("put"), a.writeCmd("merge"), a.deleteCmd(),
		a.exportCmd(), a.importCmd(), a.settleCmd(), a.copyCmd(), a.verifyCmd("verify"), a.verifyCmd("diff"),
		a.backupCmd(), a.restoreCmd(), a.versionCmd())
	return root
}

// format returns the output format to use for data on stdout.
func (a *app) format() (string, error) {
	switch a.output {
	case "auto", "":
		if isTerminal(a.env.Stdout, a.env.StdoutTerminal) {
			return "table", nil
		}
		return "jsonl", nil
	case "table", "jsonl", "csv":
		return a.output, nil
	case "json":
		return "jsonl", nil
	}
	return "", usagef("--output %q: use auto, table, jsonl or csv", a.output)
}

// say writes a message for people on stderr unless --quiet.
func (a *app) say(format string, args ...any) {
	if !a.quiet {
		fmt.Fprintf(a.env.Stderr, format+"\n", args...)
	}
}
