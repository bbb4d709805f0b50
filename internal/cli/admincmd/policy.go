package admincmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newAdminPolicyCmd is `admin policy`: mc's policy verbs.
func newAdminPolicyCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Manage policies: create, rm, ls, info, attach, detach, entities",
		Example: `  twinlake admin policy create site1 read-logs ./read-logs.json
  twinlake admin policy attach site1 read-logs --user alice
  twinlake admin policy entities site1`,
	}
	cmd.AddCommand(
		&cobra.Command{
			Use: "create ALIAS NAME FILE", Short: "Create or replace a policy from an IAM JSON file",
			Example: "  twinlake admin policy create site1 read-logs ./read-logs.json", Args: cobra.ExactArgs(3),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				doc, err := os.ReadFile(args[2])
				if err != nil {
					return nil, "", err
				}
				err = c.CreatePolicy(cmd.Context(), args[1], doc)
				return map[string]string{"policy": args[1], "status": "created"}, fmt.Sprintf("Created policy `%s` successfully.", args[1]), err
			}),
		},
		&cobra.Command{
			Use: "rm ALIAS NAME", Short: "Remove a policy that is attached to nothing",
			Example: "  twinlake admin policy rm site1 read-logs", Args: cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				err := c.RemovePolicy(cmd.Context(), args[1])
				return map[string]string{"policy": args[1], "status": "removed"}, fmt.Sprintf("Removed policy `%s` successfully.", args[1]), err
			}),
		},
		&cobra.Command{
			Use: "ls ALIAS", Short: "List policies, built-ins included", Example: "  twinlake admin policy ls site1",
			Args: cobra.ExactArgs(1),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				ps, err := c.ListPolicies(cmd.Context())
				var names []string
				for _, p := range ps {
					names = append(names, p.Name)
				}
				return ps, strings.Join(names, "\n"), err
			}),
		},
		&cobra.Command{
			Use: "info ALIAS NAME", Short: "Show a policy's document",
			Example: "  twinlake admin policy info site1 readonly", Args: cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				p, err := c.PolicyInfo(cmd.Context(), args[1])
				var b bytes.Buffer
				json.Indent(&b, p.Document, "", "  ")
				return p, b.String(), err
			}),
		},
		attachCmd(opts, "attach"),
		attachCmd(opts, "detach"),
		&cobra.Command{
			Use: "entities ALIAS", Short: "List the users and groups each policy is attached to",
			Example: "  twinlake admin policy entities site1", Args: cobra.ExactArgs(1),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				es, err := c.PolicyEntities(cmd.Context())
				var b strings.Builder
				for _, e := range es {
					fmt.Fprintf(&b, "Policy: %s\n", e.Policy)
					if len(e.Users) > 0 {
						fmt.Fprintf(&b, "  User Mappings: %s\n", strings.Join(e.Users, ", "))
					}
					if len(e.Groups) > 0 {
						fmt.Fprintf(&b, "  Group Mappings: %s\n", strings.Join(e.Groups, ", "))
					}
				}
				return es, strings.TrimSuffix(b.String(), "\n"), err
			}),
		},
	)
	return cmd
}

// attachCmd builds `policy attach` or `policy detach`.
func attachCmd(opts *cmdutil.Options, verb string) *cobra.Command {
	var user, group string
	cmd := &cobra.Command{
		Use:     verb + " ALIAS POLICY... (--user USER | --group GROUP)",
		Short:   strings.ToUpper(verb[:1]) + verb[1:] + " policies to or from a user or group",
		Example: fmt.Sprintf("  twinlake admin policy %s site1 readonly --user alice\n  twinlake admin policy %s site1 readwrite diagnostics --group ops", verb, verb),
		Args:    cobra.MinimumNArgs(2),
		RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
			if (user == "") == (group == "") {
				return nil, "", errors.New("give exactly one of --user or --group")
			}
			req := adminclient.AttachRequest{Policies: args[1:], User: user, Group: group}
			call, did := c.AttachPolicy, "Attached"
			if verb == "detach" {
				call, did = c.DetachPolicy, "Detached"
			}
			who := "user `" + user + "`"
			if group != "" {
				who = "group `" + group + "`"
			}
			err := call(cmd.Context(), req)
			return req, fmt.Sprintf("%s policies `%s` %s %s.", did, strings.Join(args[1:], ","), map[string]string{"attach": "to", "detach": "from"}[verb], who), err
		}),
	}
	cmd.Flags().StringVar(&user, "user", "", "the user")
	cmd.Flags().StringVar(&group, "group", "", "the group")
	return cmd
}
