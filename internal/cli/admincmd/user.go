package admincmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newAdminUserCmd is `admin user`: mc's user verbs.
func newAdminUserCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Manage users: add, rm, ls, info, enable, disable",
		Example: `  twinlake admin user add site1 alice alice-secret-key
  twinlake admin user ls site1
  twinlake admin user disable site1 alice`,
	}
	cmd.AddCommand(
		&cobra.Command{
			Use: "add ALIAS ACCESSKEY SECRETKEY", Short: "Add a user (its name is its access key)",
			Example: "  twinlake admin user add site1 alice alice-secret-key",
			Args:    cobra.ExactArgs(3),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				err := c.AddUser(cmd.Context(), args[1], args[2])
				return map[string]string{"user": args[1], "status": "added"}, fmt.Sprintf("Added user `%s` successfully.", args[1]), err
			}),
		},
		&cobra.Command{
			Use: "rm ALIAS USERNAME", Short: "Remove a user, its access keys and group memberships",
			Example: "  twinlake admin user rm site1 alice",
			Args:    cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				err := c.RemoveUser(cmd.Context(), args[1])
				return map[string]string{"user": args[1], "status": "removed"}, fmt.Sprintf("Removed user `%s` successfully.", args[1]), err
			}),
		},
		&cobra.Command{
			Use: "ls ALIAS", Short: "List users", Example: "  twinlake admin user ls site1",
			Args: cobra.ExactArgs(1),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				users, err := c.ListUsers(cmd.Context())
				var b strings.Builder
				for _, u := range users {
					fmt.Fprintf(&b, "%-9s %-24s %s\n", enabledWord(u.Enabled), u.Name, strings.Join(u.Policies, ","))
				}
				return users, strings.TrimSuffix(b.String(), "\n"), err
			}),
		},
		&cobra.Command{
			Use: "info ALIAS USERNAME", Short: "Show a user's status, policies and groups",
			Example: "  twinlake admin user info site1 alice", Args: cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				u, err := c.UserInfo(cmd.Context(), args[1])
				human := fmt.Sprintf("AccessKey: %s\nStatus: %s\nPolicyName: %s\nMemberOf: %s",
					u.Name, enabledWord(u.Enabled), strings.Join(u.Policies, ","), strings.Join(u.Groups, ","))
				return u, human, err
			}),
		},
		statusCmd(opts, "enable", "user", "USERNAME", true, (*adminclient.Client).SetUserStatus),
		statusCmd(opts, "disable", "user", "USERNAME", false, (*adminclient.Client).SetUserStatus),
	)
	return cmd
}

// adminRun adapts an admin call that returns (JSON value, human text,
// error) to a RunE over the alias in args[0].
func adminRun(opts *cmdutil.Options, fn func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := opts.AdminClient(args[0])
		if err != nil {
			return err
		}
		v, human, err := fn(cmd, c, args)
		if err != nil {
			return fmt.Errorf("%s %s: %w", cmd.CommandPath()[len(cmd.Root().Name())+1:], strings.Join(args, " "), err)
		}
		return cmdutil.PrintResult(cmd.OutOrStdout(), opts, v, human)
	}
}

// statusCmd builds an enable or disable verb for a user, group or key.
func statusCmd(opts *cmdutil.Options, verb, noun, arg string, enabled bool,
	set func(c *adminclient.Client, ctx context.Context, name string, enabled bool) error) *cobra.Command {
	return &cobra.Command{
		Use: verb + " ALIAS " + arg, Short: strings.ToUpper(verb[:1]) + verb[1:] + " a " + noun,
		Example: fmt.Sprintf("  twinlake admin %s %s site1 NAME", noun, verb), Args: cobra.ExactArgs(2),
		RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
			err := set(c, cmd.Context(), args[1], enabled)
			return map[string]any{noun: args[1], "enabled": enabled},
				fmt.Sprintf("%s `%s` is %sd.", strings.ToUpper(noun[:1])+noun[1:], args[1], verb), err
		}),
	}
}

func enabledWord(enabled bool) string {
	if enabled {
		return "enabled"
	}
	return "disabled"
}
