package objcmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// healthPath is where a site answers its unauthenticated probes.
const healthPath = "/twinlake/health/"

// probeTimeout bounds one health probe: a site that does not answer in it
// counts as down.
const probeTimeout = 5 * time.Second

func newReadyCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ready ALIAS",
		Short: "Check whether a site is ready to serve requests",
		Long: `Probe the site's readiness endpoint (` + healthPath + `ready, no credentials
needed). Exits 0 when the site is ready, 1 when it is not or cannot be
reached, so it fits a deployment script or a container health check.`,
		Example: `  twinlake ready site1
  until twinlake ready site1 >/dev/null; do sleep 1; done
  twinlake ready --json site1`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			a, err := opts.LookupAlias(args[0])
			if err != nil {
				return err
			}
			p := probeHealth(cmd.Context(), a.URL, "ready")
			r := readyResult{Status: "success", Alias: args[0], Healthy: p.err == nil}
			human := fmt.Sprintf("The site %s is ready", args[0])
			if p.err != nil {
				r.Status, r.Error = "error", &cmdutil.JSONErrorBody{Message: p.err.Error()}
				human = fmt.Sprintf("The site %s is not ready: %v", args[0], p.err)
			}
			if err := cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human); err != nil {
				return err
			}
			if p.err != nil {
				return fmt.Errorf("%w: %s is not ready", cmdutil.ErrItemsFailed, args[0])
			}
			return nil
		}),
	}
	return cmd
}

// readyResult is ready's answer.
type readyResult struct {
	Status  string                 `json:"status"`
	Alias   string                 `json:"alias"`
	Healthy bool                   `json:"healthy"`
	Error   *cmdutil.JSONErrorBody `json:"error,omitempty"`
}

// probe is one health request's outcome.
type probe struct {
	endpoint string
	took     time.Duration
	err      error
}

// probeHealth GETs the named health endpoint ("live" or "ready") of the site
// at base; anything but 200 is an error.
func probeHealth(ctx context.Context, base, which string) probe {
	p := probe{endpoint: strings.TrimSuffix(base, "/") + healthPath + which}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.endpoint, nil)
	if err != nil {
		p.err = err
		return p
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	p.took = time.Since(start)
	if err != nil {
		p.err = fmt.Errorf("unreachable: %w", unwrapURLError(err))
		return p
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		p.err = fmt.Errorf("%s answered %s", p.endpoint, resp.Status)
	}
	return p
}

// unwrapURLError drops net/http's "Get URL:" prefix: the caller names the
// endpoint already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
