package objcmd

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// AddAliasCommands attaches alias set|list|remove.
func AddAliasCommands(root *cobra.Command, opts *cmdutil.Options) {
	alias := &cobra.Command{
		Use:   "alias",
		Short: "Manage the sites this client talks to (URL and credentials per alias)",
		Example: `  twinlake alias set site1 http://127.0.0.1:9000 ACCESS_KEY SECRET_KEY
  twinlake alias list
  twinlake alias remove site1`,
	}
	alias.AddCommand(newAliasSetCmd(opts), newAliasListCmd(opts), newAliasRemoveCmd(opts))
	root.AddCommand(alias)
}

// aliasView is how an alias is shown: never with its full secret key.
type aliasView struct {
	Alias        string `json:"alias"`
	URL          string `json:"url"`
	AccessKey    string `json:"accessKey"`
	SecretKey    string `json:"secretKey"`
	SessionToken string `json:"sessionToken,omitempty"`
}

func newAliasView(name string, a cmdutil.Alias) aliasView {
	v := aliasView{Alias: name, URL: a.URL, AccessKey: a.AccessKey, SecretKey: maskSecret(a.SecretKey)}
	if a.SessionToken != "" {
		v.SessionToken = maskSecret(a.SessionToken)
	}
	return v
}

// maskSecret shows at most the first three characters of a secret, and never
// its length.
func maskSecret(s string) string {
	if len(s) < 8 {
		return "****"
	}
	return s[:3] + "****"
}

func newAliasSetCmd(opts *cmdutil.Options) *cobra.Command {
	var token string
	cmd := &cobra.Command{
		Use:   "set NAME URL ACCESS_KEY SECRET_KEY",
		Short: "Add or replace an alias",
		Long: `Add or replace an alias. The configuration is stored in config.json in the
client config directory ($TWINLAKE_CONFIG_DIR, default ~/.twinlake) with mode 0600.
The server is not contacted. A temporary credential (from STS AssumeRole) is set
with its session token (--session-token, or TWINLAKE_SESSION_TOKEN), which every
command then sends; when it expires, the site answers ExpiredToken.`,
		Example: `  twinlake alias set site1 http://127.0.0.1:9000 admin 'S3cr3t-K3y'
  twinlake alias set dr https://dr.example.com:9000 admin 'S3cr3t-K3y' --json
  TWINLAKE_SESSION_TOKEN="$TOKEN" twinlake alias set temp http://127.0.0.1:9000 ASIA... 'TempSecret'`,
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, rawURL, ak, sk := args[0], args[1], args[2], args[3]
			if err := validateAliasName(name); err != nil {
				return err
			}
			if err := cmdutil.ValidateAliasURL(rawURL); err != nil {
				return err
			}
			u, _ := url.Parse(rawURL)
			if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
				return fmt.Errorf("invalid URL %q: want http(s)://host:port without a path", rawURL)
			}
			if ak == "" || sk == "" {
				return fmt.Errorf("alias %q: access key and secret key must not be empty", name)
			}
			cfg, err := opts.LoadConfig()
			if err != nil {
				return err
			}
			if token == "" {
				token = os.Getenv("TWINLAKE_SESSION_TOKEN")
			}
			a := cmdutil.Alias{URL: u.Scheme + "://" + u.Host, AccessKey: ak, SecretKey: sk, SessionToken: token}
			cfg.Aliases[name] = a
			if err := opts.SaveConfig(cfg); err != nil {
				return fmt.Errorf("save alias %q: %w", name, err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts,
				struct {
					Status string `json:"status"`
					aliasView
				}{"success", newAliasView(name, a)},
				fmt.Sprintf("Added `%s` successfully.", name))
		},
	}
	cmd.Flags().StringVar(&token, "session-token", "", "session token of a temporary credential (default $TWINLAKE_SESSION_TOKEN)")
	return cmd
}

// validateAliasName rejects names that could not be the first part of
// ALIAS/BUCKET/KEY.
func validateAliasName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\\ \t") || name == "." || name == ".." {
		return fmt.Errorf("invalid alias name %q: use letters, digits, '-', '_' or '.'", name)
	}
	return nil
}

func newAliasListCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "list [NAME]",
		Aliases: []string{"ls"},
		Short:   "List aliases (secret keys are masked)",
		Example: `  twinlake alias list
  twinlake alias list site1 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := opts.LoadConfig()
			if err != nil {
				return err
			}
			names := cmdutil.SortedAliasNames(cfg)
			if len(args) == 1 {
				if _, ok := cfg.Aliases[args[0]]; !ok {
					return fmt.Errorf("%w %q", cmdutil.ErrNoAlias, args[0])
				}
				names = args
			}
			w := cmd.OutOrStdout()
			for _, n := range names {
				v := newAliasView(n, cfg.Aliases[n])
				human := fmt.Sprintf("%s\n  URL       : %s\n  AccessKey : %s\n  SecretKey : %s\n", n, v.URL, v.AccessKey, v.SecretKey)
				if v.SessionToken != "" {
					human += fmt.Sprintf("  SessionToken : %s\n", v.SessionToken)
				}
				if err := cmdutil.PrintResult(w, opts, v, strings.TrimSuffix(human, "\n")); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func newAliasRemoveCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "remove NAME",
		Aliases: []string{"rm"},
		Short:   "Remove an alias from the client configuration (the site is untouched)",
		Example: `  twinlake alias remove site1`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			cfg, err := opts.LoadConfig()
			if err != nil {
				return err
			}
			if _, ok := cfg.Aliases[name]; !ok {
				return fmt.Errorf("%w %q", cmdutil.ErrNoAlias, name)
			}
			delete(cfg.Aliases, name)
			if err := opts.SaveConfig(cfg); err != nil {
				return fmt.Errorf("remove alias %q: %w", name, err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts,
				map[string]string{"status": "success", "alias": name},
				fmt.Sprintf("Removed `%s` successfully.", name))
		},
	}
}
