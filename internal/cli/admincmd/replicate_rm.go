package admincmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newAdminReplicateRmCmd(opts *cmdutil.Options) *cobra.Command {
	var all, force bool
	cmd := &cobra.Command{
		Use:   "rm ALIAS [SITE ...] [--all --force]",
		Short: "Take sites out of site replication, or end it everywhere",
		Long: `Take the named sites (by the site name shown by 'admin replicate info', the
alias used when they were added) out of site replication, on every site that
can be reached. With --all, site replication ends on every site; --all needs
--force. Data already copied stays where it is; queued work for a removed
site is discarded. When fewer than two sites would remain, site replication
ends.`,
		Example: `  twinlake admin replicate rm site1 site3
  twinlake admin replicate rm site1 --all --force`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			aliasName, sites := args[0], args[1:]
			switch {
			case all && len(sites) > 0:
				return errors.New("admin replicate rm: name sites or pass --all, not both")
			case !all && len(sites) == 0:
				return errors.New("admin replicate rm: name the sites to remove, or pass --all --force to end site replication")
			case all && !force:
				return errors.New("admin replicate rm: --all ends site replication on every site: pass --force to confirm")
			}
			c, err := opts.AdminClient(aliasName)
			if err != nil {
				return err
			}
			info, err := c.ReplicateRemove(cmd.Context(), sites, all)
			if err != nil {
				return replErr("admin replicate rm "+strings.Join(args, " "), err)
			}
			human := "All sites were removed: SiteReplication is disabled."
			switch {
			case !all && info.Enabled:
				human = fmt.Sprintf("Removed %s from site replication.\n\n%s", strings.Join(sites, ", "), infoHuman(info))
			case !all:
				human = fmt.Sprintf("Removed %s: fewer than two sites remain, SiteReplication is disabled.", strings.Join(sites, ", "))
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, info, human)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "end site replication on every site")
	cmd.Flags().BoolVar(&force, "force", false, "confirm --all")
	return cmd
}
