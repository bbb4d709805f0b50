// Package cmdutil holds what every twinlake command family shares: the
// global flags, the client configuration and its aliases, the clients built
// from an alias (S3, admin, catalog) and the output helpers that keep --json
// and human output the same across commands.
package cmdutil

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/adminclient"
)

// Version is the twinlake release, set at link time.
var Version = "dev"

// options are the flags every command shares.
type Options struct {
	JSON      bool
	Quiet     bool // no progress reports
	ConfigDir string
}

// printResult writes v as JSON with --json, else the human text.
func PrintResult(w io.Writer, opts *Options, v any, human string) error {
	if opts.JSON {
		enc := json.NewEncoder(w)
		return enc.Encode(v)
	}
	if human == "" {
		return nil
	}
	_, err := fmt.Fprintln(w, human)
	return err
}

// errObjAborted is returned when the operator declines a destructive
// command's prompt (or there is no terminal to answer it and no --yes).
var ErrAborted = errors.New("aborted: nothing removed (pass --yes to skip the prompt)")

// objConfirm asks question on the command's output and reads the answer from
// its input; anything but y/yes aborts. yes skips the prompt.
func Confirm(cmd *cobra.Command, yes bool, question string) error {
	if yes {
		return nil
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s [y/N]: ", question)
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && line == "" {
		return ErrAborted
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrAborted
}

// fmtBytes renders a byte count the way mc does: IEC units, one decimal.
func FmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// fmtListTime renders a listing timestamp as mc does: [UTC, to the second].
func FmtListTime(t time.Time) string {
	return "[" + t.UTC().Format("2006-01-02 15:04:05 MST") + "]"
}

// adminClient resolves the alias by name and builds an admin API client
// signed with its credentials.
func (o *Options) AdminClient(aliasName string) (*adminclient.Client, error) {
	a, err := o.LookupAlias(aliasName)
	if err != nil {
		return nil, err
	}
	c, err := adminclient.New(a.URL, adminclient.Credentials{AccessKey: a.AccessKey, SecretKey: a.SecretKey, SessionToken: a.SessionToken}, adminclient.Config{
		UserAgent: "twinlake-cli/" + Version,
	})
	if err != nil {
		return nil, fmt.Errorf("alias %q: %w", aliasName, err)
	}
	return c, nil
}

// catalogClient resolves the alias and builds an Iceberg REST client for one
// warehouse.
func (o *Options) CatalogClient(aliasName, warehouse string) (*adminclient.CatalogClient, error) {
	a, err := o.LookupAlias(aliasName)
	if err != nil {
		return nil, err
	}
	c, err := adminclient.NewCatalog(a.URL, warehouse, adminclient.Credentials{AccessKey: a.AccessKey, SecretKey: a.SecretKey, SessionToken: a.SessionToken},
		adminclient.Config{UserAgent: "twinlake-cli/" + Version})
	if err != nil {
		return nil, fmt.Errorf("alias %q: %w", aliasName, err)
	}
	return c, nil
}

// requireSubcommand runs a command group: bare, it prints the help; with
// an argument, that argument named no subcommand, which is an error (cobra
// would print the help and succeed).
func RequireSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
}

// newTable starts an aligned table on b; flush it when done.
func NewTable(b *strings.Builder) *tabwriter.Writer {
	return tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
}

// fmtDuration rounds d to what an operator reads: about three digits.
func FmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// fmtTime renders a timestamp in UTC to the second, "-" when unset.
func FmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}
