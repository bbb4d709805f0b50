package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// addAdminCommands attaches the admin command tree (info, config, trace,
// replicate, user, group, policy, accesskey).
func addAdminCommands(root *cobra.Command, opts *options) {
	admin := &cobra.Command{
		Use:   "admin",
		Short: "Administer a site: server info, settings, live trace and site replication",
		Example: `  twinlake admin info site1
  twinlake admin config get site1 tables
  twinlake admin config set site1 tables replica_catalog=on
  twinlake admin trace -v --call tables-scan site1
  twinlake admin replicate add site1 site2
  twinlake admin user add site1 alice alice-secret-key
  twinlake admin policy attach site1 readonly --user alice`,
	}
	for _, newCmd := range []func(*options) *cobra.Command{
		newAdminInfoCmd,
		newAdminConfigCmd,
		newAdminTraceCmd,
		newAdminReplicateCmd,
		newAdminUserCmd,
		newAdminGroupCmd,
		newAdminPolicyCmd,
		newAdminAccessKeyCmd,
		newAdminPrometheusCmd,
	} {
		admin.AddCommand(newCmd(opts))
	}
	root.AddCommand(admin)
}

// adminClient resolves the alias by name and builds an admin API client
// signed with its credentials.
func (o *options) adminClient(aliasName string) (*adminclient.Client, error) {
	a, err := o.alias(aliasName)
	if err != nil {
		return nil, err
	}
	c, err := adminclient.New(a.URL, adminclient.Credentials{AccessKey: a.AccessKey, SecretKey: a.SecretKey}, adminclient.Config{
		UserAgent: "twinlake-cli/" + Version,
	})
	if err != nil {
		return nil, fmt.Errorf("alias %q: %w", aliasName, err)
	}
	return c, nil
}
