package admincmd

import (
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// AddAdminCommands attaches the admin command tree (info, config, trace,
// replicate, user, group, policy, accesskey, prometheus, heal).
func AddAdminCommands(root *cobra.Command, opts *cmdutil.Options) {
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
	for _, newCmd := range []func(*cmdutil.Options) *cobra.Command{
		newAdminInfoCmd,
		newAdminConfigCmd,
		newAdminTraceCmd,
		newAdminReplicateCmd,
		newAdminUserCmd,
		newAdminGroupCmd,
		newAdminPolicyCmd,
		newAdminAccessKeyCmd,
		newAdminPrometheusCmd,
		newAdminHealCmd,
	} {
		admin.AddCommand(newCmd(opts))
	}
	root.AddCommand(admin)
}
