package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// moduleVersion is the version of the module the binary was built from:
// v1.2.3 from go install ...@v1.2.3, a pseudo-version or (devel) from a
// build in a checkout, (devel) when the binary has no build information.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{Use: "version", Short: "Print tablekit's module version and the Go version it was built with", Args: nArgs(0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(a.env.Stdout, "tablekit %s %s\n", moduleVersion(), runtime.Version())
			return err
		}}
}
