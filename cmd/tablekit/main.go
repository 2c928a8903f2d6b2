// Command tablekit operates Azure Table storage: it lists, creates and
// deletes tables, reads and queries entities, writes one entity with its
// ETag, exports and imports files (resumably), copies, verifies and diffs
// tables, and backs up and restores accounts. docs/cli.md documents every
// command.
//
//	go install github.com/tablekit/tablekit/cmd/tablekit@latest
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tablekit/tablekit/cmd/tablekit/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
