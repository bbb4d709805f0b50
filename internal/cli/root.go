// Package cli owns the twinlake command line: the server command and the
// operator's client commands (aliases, objects, admin, tables, bench). One
// file per command; every command takes --json and returns errors to main,
// which prints one line and exits non-zero.
package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Version is the twinlake release, set at link time.
var Version = "dev"

// options are the flags every command shares.
type options struct {
	json      bool
	configDir string
}

// NewRoot builds the root command with every subcommand attached.
func NewRoot() *cobra.Command {
	opts := &options{}
	root := &cobra.Command{
		Use:           "twinlake",
		Short:         "twinlake: S3-compatible object store with multi-site replication and an Iceberg catalog",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.PersistentFlags().BoolVar(&opts.json, "json", false, "print machine-readable JSON")
	root.PersistentFlags().StringVar(&opts.configDir, "config-dir", "", "client config directory (default $TWINLAKE_CONFIG_DIR or ~/.twinlake)")
	for _, add := range []func(*cobra.Command, *options){
		addServerCommands,
		addDemoCommand,
		addAliasCommands,
		addObjectCommands,
		addAdminCommands,
		addAnonymousCommands,
		addReplicateCommands,
		addTableCommands,
		addBenchCommands,
	} {
		add(root, opts)
	}
	return root
}

// printResult writes v as JSON with --json, else the human text.
func printResult(w io.Writer, opts *options, v any, human string) error {
	if opts.json {
		enc := json.NewEncoder(w)
		return enc.Encode(v)
	}
	if human == "" {
		return nil
	}
	_, err := fmt.Fprintln(w, human)
	return err
}
