package admincmd

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// tokenPlaceholder stands in the generated configuration for a bearer token
// the client does not know: the token is a server setting it cannot read.
const tokenPlaceholder = "REPLACE-WITH-" + metricsTokenEnv

// scrapeAuth is how Prometheus authenticates to the site.
type scrapeAuth struct {
	token     string // bearer token written inline
	tokenFile string // or a file Prometheus reads it from
	public    bool   // or nothing: the server runs with TWINLAKE_METRICS_AUTH=public
}

// scrapeConfig is one Prometheus scrape job for one site.
type scrapeConfig struct {
	job, scheme, target string
	auth                scrapeAuth
}

func newAdminPrometheusGenerateCmd(opts *cmdutil.Options) *cobra.Command {
	var job string
	var auth scrapeAuth
	c := &cobra.Command{
		Use:   "generate ALIAS",
		Short: "Print a Prometheus scrape configuration for a site",
		Long: `Print a Prometheus scrape configuration (a scrape_configs entry) for the site ALIAS
names: its metrics path, scheme and host:port, and how Prometheus authenticates.

Prometheus cannot sign requests with SigV4 for S3, so the configuration uses the
bearer token the server was started with (` + metricsTokenEnv + `). The client cannot
read a server's token: pass it with --token (default: $` + metricsTokenEnv + ` in the
client's environment) or --token-file, or use --public for a server started with
TWINLAKE_METRICS_AUTH=public. Without any of them the token is a placeholder to
replace, and a note on stderr says so.`,
		Example: `  twinlake admin prometheus generate site1 --token "$TWINLAKE_METRICS_TOKEN"
  twinlake admin prometheus generate site1 --token-file /etc/prometheus/twinlake.token
  twinlake admin prometheus generate site1 --public --job dr-site`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := opts.LookupAlias(args[0])
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("token") {
				auth.token = os.Getenv(metricsTokenEnv)
			}
			if job == "" {
				job = "twinlake-" + args[0]
			}
			sc, err := newScrapeConfig(job, a.URL, auth)
			if err != nil {
				return fmt.Errorf("alias %q: %w", args[0], err)
			}
			if sc.auth == (scrapeAuth{}) {
				fmt.Fprintf(cmd.ErrOrStderr(), "Note: replace %s with the value of %s the server at %s was started with "+
					"(or pass --token, --token-file, or --public for a server with TWINLAKE_METRICS_AUTH=public).\n",
					tokenPlaceholder, metricsTokenEnv, a.URL)
			}
			return sc.write(cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVar(&job, "job", "", "scrape job name (default twinlake-ALIAS)")
	f.StringVar(&auth.token, "token", "", "bearer token the server accepts ("+metricsTokenEnv+"; default: $"+metricsTokenEnv+")")
	f.StringVar(&auth.tokenFile, "token-file", "", "file holding the bearer token, read by Prometheus (credentials_file)")
	f.BoolVar(&auth.public, "public", false, "no authorization: the server runs with TWINLAKE_METRICS_AUTH=public")
	c.MarkFlagsMutuallyExclusive("token", "token-file", "public")
	return c
}

// newScrapeConfig derives the scheme and host:port of a scrape target from
// an alias URL, filling in the scheme's default port.
func newScrapeConfig(job, aliasURL string, auth scrapeAuth) (scrapeConfig, error) {
	u, err := url.Parse(aliasURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return scrapeConfig{}, fmt.Errorf("URL %q: want http(s)://host[:port]", aliasURL)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if auth.tokenFile != "" || auth.public {
		auth.token = ""
	}
	return scrapeConfig{job: job, scheme: u.Scheme, target: net.JoinHostPort(u.Hostname(), port), auth: auth}, nil
}

// write prints the configuration as YAML. Every string is double-quoted
// with Go's escapes, which YAML's double-quoted style shares, so no value
// can break the document.
func (sc scrapeConfig) write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("scrape_configs:\n")
	fmt.Fprintf(&b, "  - job_name: %s\n", strconv.Quote(sc.job))
	fmt.Fprintf(&b, "    metrics_path: %s\n", strconv.Quote(metricsPath))
	fmt.Fprintf(&b, "    scheme: %s\n", sc.scheme)
	switch {
	case sc.auth.public:
	case sc.auth.tokenFile != "":
		fmt.Fprintf(&b, "    authorization:\n      type: Bearer\n      credentials_file: %s\n", strconv.Quote(sc.auth.tokenFile))
	default:
		token := sc.auth.token
		if token == "" {
			token = tokenPlaceholder
		}
		fmt.Fprintf(&b, "    authorization:\n      type: Bearer\n      credentials: %s\n", strconv.Quote(token))
	}
	fmt.Fprintf(&b, "    static_configs:\n      - targets: [%s]\n", strconv.Quote(sc.target))
	_, err := io.WriteString(w, b.String())
	return err
}
