package admincmd

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newAdminAccessKeyCmd is `admin accesskey`: mc's access key verbs.
func newAdminAccessKeyCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "accesskey",
		Short: "Manage access keys of users: create, edit, ls, rm, info, enable, disable",
		Example: `  twinlake admin accesskey create site1 alice --policy ./dashboard.json --expiry 720h --name grafana
  twinlake admin accesskey ls site1 alice
  twinlake admin accesskey disable site1 AKEXAMPLE`,
	}
	cmd.AddCommand(newAccessKeyCreateCmd(opts), newAccessKeyEditCmd(opts),
		&cobra.Command{
			Use: "ls ALIAS [USER]", Short: "List the access keys of a user (default: yours)",
			Example: "  twinlake admin accesskey ls site1 alice", Args: cobra.RangeArgs(1, 2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				user := ""
				if len(args) > 1 {
					user = args[1]
				}
				keys, err := c.ListAccessKeys(cmd.Context(), user, false)
				var b strings.Builder
				for _, k := range keys {
					exp := "no expiry"
					if !k.Expiry.IsZero() {
						exp = "expires " + k.Expiry.Format(time.RFC3339)
					}
					fmt.Fprintf(&b, "%-24s %-9s %-12s %s %s\n", k.AccessKey, enabledWord(k.Enabled), k.User, exp, k.Name)
				}
				return keys, strings.TrimSuffix(b.String(), "\n"), err
			}),
		},
		&cobra.Command{
			Use: "rm ALIAS ACCESSKEY", Short: "Remove an access key",
			Example: "  twinlake admin accesskey rm site1 AKEXAMPLE", Args: cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				err := c.RemoveAccessKey(cmd.Context(), args[1])
				return map[string]string{"accessKey": args[1], "status": "removed"}, fmt.Sprintf("Removed access key `%s` successfully.", args[1]), err
			}),
		},
		&cobra.Command{
			Use: "info ALIAS ACCESSKEY", Short: "Show an access key (never its secret)",
			Example: "  twinlake admin accesskey info site1 AKEXAMPLE", Args: cobra.ExactArgs(2),
			RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
				k, err := c.AccessKeyInfo(cmd.Context(), args[1])
				exp := "no expiry"
				if !k.Expiry.IsZero() {
					exp = k.Expiry.Format(time.RFC3339)
				}
				pol := "implied (the user's)"
				if len(k.Policy) > 0 {
					pol = "embedded: " + string(k.Policy)
				}
				human := fmt.Sprintf("AccessKey: %s\nParentUser: %s\nStatus: %s\nName: %s\nDescription: %s\nPolicy: %s\nExpiration: %s",
					k.AccessKey, k.User, enabledWord(k.Enabled), k.Name, k.Description, pol, exp)
				return k, human, err
			}),
		},
		statusCmd(opts, "enable", "accesskey", "ACCESSKEY", true, (*adminclient.Client).SetAccessKeyStatus),
		statusCmd(opts, "disable", "accesskey", "ACCESSKEY", false, (*adminclient.Client).SetAccessKeyStatus),
	)
	return cmd
}

func newAccessKeyCreateCmd(opts *cmdutil.Options) *cobra.Command {
	var req adminclient.AccessKeyCreateRequest
	var policyFile, expiry string
	cmd := &cobra.Command{
		Use:   "create ALIAS [USER]",
		Short: "Create an access key for a user (default: yours), optionally narrowed and expiring",
		Example: `  twinlake admin accesskey create site1 alice
  twinlake admin accesskey create site1 alice --policy ./readonly-metrics.json --expiry 720h --name grafana`,
		Args: cobra.RangeArgs(1, 2),
		RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
			if len(args) > 1 {
				req.User = args[1]
			}
			if policyFile != "" {
				doc, err := os.ReadFile(policyFile)
				if err != nil {
					return nil, "", err
				}
				if !json.Valid(doc) {
					return nil, "", fmt.Errorf("--policy %s: not a JSON document", policyFile)
				}
				req.Policy = doc
			}
			if expiry != "" {
				t, err := parseExpiry(expiry, time.Now())
				if err != nil {
					return nil, "", err
				}
				req.Expiry = t
			}
			cred, err := c.CreateAccessKey(cmd.Context(), req)
			return cred, fmt.Sprintf("Access Key: %s\nSecret Key: %s", cred.AccessKey, cred.SecretKey), err
		}),
	}
	f := cmd.Flags()
	f.StringVar(&req.AccessKey, "access-key", "", "access key (default generated)")
	f.StringVar(&req.SecretKey, "secret-key", "", "secret key (default generated)")
	f.StringVar(&policyFile, "policy", "", "session policy file narrowing the user's rights")
	f.StringVar(&expiry, "expiry", "", "expiry as a duration from now (720h) or a date (2027-01-01T00:00:00Z)")
	f.StringVar(&req.Name, "name", "", "name of the key")
	f.StringVar(&req.Description, "description", "", "description of the key")
	return cmd
}

// parseExpiry reads a duration from now or an RFC 3339 time.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--expiry %q: want a duration (720h) or an RFC 3339 time", s)
}

func newAccessKeyEditCmd(opts *cmdutil.Options) *cobra.Command {
	var secret, policyFile, expiry, name, description string
	cmd := &cobra.Command{
		Use:   "edit ALIAS ACCESSKEY",
		Short: "Change an access key's secret, session policy, expiry, name or description",
		Example: `  twinlake admin accesskey edit site1 AKEXAMPLE --expiry 2160h
  twinlake admin accesskey edit site1 AKEXAMPLE --policy ./narrower.json --name grafana-prod`,
		Args: cobra.ExactArgs(2),
		RunE: adminRun(opts, func(cmd *cobra.Command, c *adminclient.Client, args []string) (any, string, error) {
			var req adminclient.AccessKeyEditRequest
			f := cmd.Flags()
			if f.Changed("secret-key") {
				req.SecretKey = &secret
			}
			if f.Changed("name") {
				req.Name = &name
			}
			if f.Changed("description") {
				req.Description = &description
			}
			if f.Changed("policy") {
				doc, err := os.ReadFile(policyFile)
				if err != nil {
					return nil, "", err
				}
				if !json.Valid(doc) {
					return nil, "", fmt.Errorf("--policy %s: not a JSON document", policyFile)
				}
				raw := json.RawMessage(doc)
				req.Policy = &raw
			}
			if f.Changed("expiry") {
				t, err := parseExpiry(expiry, time.Now())
				if err != nil {
					return nil, "", err
				}
				req.Expiry = &t
			}
			err := c.EditAccessKey(cmd.Context(), args[1], req)
			return map[string]string{"accessKey": args[1], "status": "edited"}, fmt.Sprintf("Edited access key `%s` successfully.", args[1]), err
		}),
	}
	f := cmd.Flags()
	f.StringVar(&secret, "secret-key", "", "new secret key")
	f.StringVar(&policyFile, "policy", "", "new session policy file")
	f.StringVar(&expiry, "expiry", "", "new expiry: a duration from now (720h) or a date")
	f.StringVar(&name, "name", "", "new name")
	f.StringVar(&description, "description", "", "new description")
	return cmd
}
