package objcmd

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"strings"

	"github.com/minio/minio-go/v7/pkg/cors"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newCORSCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cors",
		Short: "Set, get or remove a bucket's CORS configuration",
		Long: `A bucket's CORS configuration says which web origins a browser may call it from,
with which methods and headers (S3's PutBucketCors). set reads the configuration
from a file: S3's XML (<CORSConfiguration><CORSRule>...) or the same as JSON in
the AWS CLI's shape ({"CORSRules":[{"AllowedOrigins":[...],"AllowedMethods":[...]}]}).
get prints it as XML, or with --json as that JSON, which set reads back.`,
		Example: `  twinlake cors set site1/webapp ./cors.xml
  twinlake cors get site1/webapp
  twinlake cors get --json site1/webapp > cors.json
  twinlake cors remove site1/webapp`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RequireSubcommand,
	}
	cmd.AddCommand(newCORSSetCmd(opts), newCORSGetCmd(opts), newCORSRemoveCmd(opts))
	return cmd
}

// corsJSONRule is a CORS rule in the AWS CLI's JSON shape.
type corsJSONRule struct {
	ID             string   `json:"ID,omitempty"`
	AllowedHeaders []string `json:"AllowedHeaders,omitempty"`
	AllowedMethods []string `json:"AllowedMethods"`
	AllowedOrigins []string `json:"AllowedOrigins"`
	ExposeHeaders  []string `json:"ExposeHeaders,omitempty"`
	MaxAgeSeconds  int      `json:"MaxAgeSeconds,omitempty"`
}

type corsJSON struct {
	CORSRules []corsJSONRule `json:"CORSRules"`
}

func corsToJSON(c *cors.Config) corsJSON {
	out := corsJSON{CORSRules: []corsJSONRule{}}
	for _, r := range c.CORSRules {
		out.CORSRules = append(out.CORSRules, corsJSONRule{ID: r.ID, AllowedHeaders: r.AllowedHeader, AllowedMethods: r.AllowedMethod,
			AllowedOrigins: r.AllowedOrigin, ExposeHeaders: r.ExposeHeader, MaxAgeSeconds: r.MaxAgeSeconds})
	}
	return out
}

// parseCORSFile reads a CORS configuration as XML or as JSON (bare, or
// wrapped in "CORSConfiguration" as some tools write it).
func parseCORSFile(data []byte) (*cors.Config, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("the file is empty")
	}
	if trimmed[0] != '{' {
		c, err := cors.ParseBucketCorsConfig(bytes.NewReader(trimmed))
		if err != nil {
			return nil, fmt.Errorf("not a CORS configuration in XML: %w", err)
		}
		return c, nil
	}
	var doc struct {
		corsJSON
		CORSConfiguration *corsJSON `json:"CORSConfiguration"`
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a CORS configuration in JSON: %w", err)
	}
	j := doc.corsJSON
	if doc.CORSConfiguration != nil {
		j = *doc.CORSConfiguration
	}
	var rules []cors.Rule
	for _, r := range j.CORSRules {
		methods := make([]string, len(r.AllowedMethods))
		for i, m := range r.AllowedMethods {
			methods[i] = strings.ToUpper(m)
		}
		rules = append(rules, cors.Rule{ID: r.ID, AllowedHeader: r.AllowedHeaders, AllowedMethod: methods,
			AllowedOrigin: r.AllowedOrigins, ExposeHeader: r.ExposeHeaders, MaxAgeSeconds: r.MaxAgeSeconds})
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("the configuration has no CORSRules")
	}
	return cors.NewConfig(rules), nil
}

func newCORSSetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "set ALIAS/BUCKET FILE",
		Short:   "Set a bucket's CORS configuration from an XML or JSON file",
		Example: "  twinlake cors set site1/webapp ./cors.xml",
		Args:    cobra.ExactArgs(2),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, err := cmdutil.RequireBucket(args[0])
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[1])
			if err != nil {
				return err
			}
			cfg, err := parseCORSFile(data)
			if err != nil {
				return fmt.Errorf("cors set %s: %s: %w", args[0], args[1], err)
			}
			c, err := opts.S3Client(t.Alias)
			if err != nil {
				return err
			}
			if err := c.SetBucketCors(cmd.Context(), t.Bucket, cfg); err != nil {
				return cmdutil.S3Err("cors set "+args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"target": args[0], "status": "set", "rules": len(cfg.CORSRules)},
				fmt.Sprintf("CORS configuration of `%s` set (%d rules)", args[0], len(cfg.CORSRules)))
		}),
	}
}

func newCORSGetCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "get ALIAS/BUCKET",
		Short:   "Print a bucket's CORS configuration (XML, or JSON with --json)",
		Example: "  twinlake cors get site1/webapp",
		Args:    cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, err := opts.BucketClient(args[0])
			if err != nil {
				return err
			}
			cfg, err := c.GetBucketCors(cmd.Context(), t.Bucket)
			if err != nil {
				return cmdutil.S3Err("cors get "+args[0], err)
			}
			if cfg == nil {
				return fmt.Errorf("cors get %s: the bucket has no CORS configuration", args[0])
			}
			if opts.JSON {
				return cmdutil.PrintResult(cmd.OutOrStdout(), opts, corsToJSON(cfg), "")
			}
			out, err := xml.MarshalIndent(cfg, "", "  ")
			if err != nil {
				return err
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, nil, xml.Header+string(out))
		}),
	}
}

func newCORSRemoveCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "remove ALIAS/BUCKET",
		Short:   "Remove a bucket's CORS configuration",
		Example: "  twinlake cors remove site1/webapp",
		Args:    cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, err := opts.BucketClient(args[0])
			if err != nil {
				return err
			}
			if err := c.SetBucketCors(cmd.Context(), t.Bucket, nil); err != nil {
				return cmdutil.S3Err("cors remove "+args[0], err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"target": args[0], "status": "removed"},
				fmt.Sprintf("CORS configuration of `%s` removed", args[0]))
		}),
	}
}
