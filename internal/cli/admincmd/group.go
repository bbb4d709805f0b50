package admincmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newAdminGroupCmd is `admin group`: mc's group verbs.
func newAdminGroupCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "Manage groups: add, rm, ls, info, enable, disable",
		Example: `  twinlake admin group add site1 analysts alice bob
  twinlake admin group rm site1 analysts bob
  twinlake admin group rm site1 analysts`,
	}
	cmd.AddCommand(
		&cobra.Command{
			Use: "add ALIAS GROUP MEMBERS...", Short: "Add users to a group, creating it if needed",
			Example: "  twinlake admin group add site1 analysts alice bob", Args: cobra.MinimumNArgs(3),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				err := c.AddGroupMembers(cmd.Context(), args[1], args[2:])
				return map[string]any{"group": args[1], "members": args[2:]},
					fmt.Sprintf("Added members `%s` to group `%s` successfully.", strings.Join(args[2:], ","), args[1]), err
			}),
		},
		&cobra.Command{
			Use: "rm ALIAS GROUP [MEMBERS...]", Short: "Remove members from a group, or remove an empty group",
			Example: "  twinlake admin group rm site1 analysts bob\n  twinlake admin group rm site1 analysts",
			Args:    cobra.MinimumNArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				err := c.RemoveGroupMembers(cmd.Context(), args[1], args[2:])
				msg := fmt.Sprintf("Removed group `%s` successfully.", args[1])
				if len(args) > 2 {
					msg = fmt.Sprintf("Removed members `%s` from group `%s` successfully.", strings.Join(args[2:], ","), args[1])
				}
				return map[string]any{"group": args[1], "removed": args[2:]}, msg, err
			}),
		},
		&cobra.Command{
			Use: "ls ALIAS", Short: "List groups", Example: "  twinlake admin group ls site1", Args: cobra.ExactArgs(1),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				groups, err := c.ListGroups(cmd.Context())
				var b strings.Builder
				for _, g := range groups {
					fmt.Fprintf(&b, "%-9s %s\n", enabledWord(g.Enabled), g.Name)
				}
				return groups, strings.TrimSuffix(b.String(), "\n"), err
			}),
		},
		&cobra.Command{
			Use: "info ALIAS GROUP", Short: "Show a group's status, members and policies",
			Example: "  twinlake admin group info site1 analysts", Args: cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				g, err := c.GroupInfo(cmd.Context(), args[1])
				human := fmt.Sprintf("Group: %s\nStatus: %s\nPolicy: %s\nMembers: %s",
					g.Name, enabledWord(g.Enabled), strings.Join(g.Policies, ","), strings.Join(g.Members, ","))
				return g, human, err
			}),
		},
		statusCmd(opts, "enable", "group", "GROUP", true, (*adminclient.Client).SetGroupStatus),
		statusCmd(opts, "disable", "group", "GROUP", false, (*adminclient.Client).SetGroupStatus),
	)
	return cmd
}
