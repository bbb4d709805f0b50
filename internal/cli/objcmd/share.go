package objcmd

import (
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// shareMaxExpiry is SigV4's limit on a presigned URL's lifetime.
const shareMaxExpiry = 7 * 24 * time.Hour

// newShareCmd is "share download|upload": presigned URLs that let someone
// without credentials read or write one object until they expire.
func newShareCmd(opts *cmdutil.Options) *cobra.Command {
	var (
		expire    time.Duration
		versionID string
	)
	cmd := &cobra.Command{
		Use:   "share",
		Short: "Make presigned URLs to download or upload one object",
		Long: `Print a presigned URL: anyone holding it can GET (download) or PUT
(upload) that one object, with the alias's permissions, until it expires
(--expire, default and at most 7 days). Nothing is stored on the server:
the only way to revoke a URL is to revoke the alias's key.

share upload prints a curl command doing a PUT. Unlike mc it does not make a
POST-policy form: twinlake does not take browser form uploads.`,
		Example: `  twinlake share download site1/docs/report.pdf
  twinlake share download --expire 1h site1/docs/report.pdf
  twinlake share upload --expire 30m site1/inbox/upload.bin
  twinlake share download --json site1/docs/report.pdf`,
	}
	cmd.PersistentFlags().DurationVarP(&expire, "expire", "E", shareMaxExpiry, "how long the URL works (at most 168h)")
	newSub := func(use, short, method string) *cobra.Command {
		return &cobra.Command{
			Use: use + " ALIAS/BUCKET/KEY", Short: short, Args: cobra.ExactArgs(1),
			Example: "  twinlake share " + use + " --expire 2h site1/docs/report.pdf",
			RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
				if expire < time.Second || expire > shareMaxExpiry {
					return fmt.Errorf("--expire %s: want between 1s and %s", expire, shareMaxExpiry)
				}
				return shareObject(cmd, opts, args[0], method, versionID, expire)
			}),
		}
	}
	dl := newSub("download", "Make a presigned URL that downloads an object", "GET")
	dl.Flags().StringVar(&versionID, "version-id", "", "share this version of the object")
	cmd.AddCommand(dl, newSub("upload", "Make a presigned URL (and a curl command) that uploads an object", "PUT"))
	return cmd
}

// shareResult is one presigned URL as printed.
type shareResult struct {
	Status        string    `json:"status"`
	URL           string    `json:"url"`
	Share         string    `json:"share"`
	ShareType     string    `json:"shareType"`
	Expire        string    `json:"expire"`
	ExpireSeconds float64   `json:"expireSeconds"`
	ExpiresAt     time.Time `json:"expiresAt"`
	Command       string    `json:"command,omitempty"`
}

func shareObject(cmd *cobra.Command, opts *cmdutil.Options, arg, method, versionID string, expire time.Duration) error {
	t, err := cmdutil.RequireKey(arg)
	if err != nil {
		return err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	var u *url.URL
	if method == "GET" {
		q := url.Values{}
		if versionID != "" {
			q.Set("versionId", versionID)
		}
		u, err = c.PresignedGetObject(cmd.Context(), t.Bucket, t.Key, expire, q)
	} else {
		u, err = c.PresignedPutObject(cmd.Context(), t.Bucket, t.Key, expire)
	}
	if err != nil {
		return cmdutil.S3Err("presign "+cmdutil.FmtTarget(t), err)
	}
	r := shareResult{Status: "success", URL: cmdutil.FmtTarget(t), Share: u.String(), ShareType: "download",
		Expire: expire.String(), ExpireSeconds: expire.Seconds(), ExpiresAt: time.Now().Add(expire).UTC().Truncate(time.Second)}
	human := fmt.Sprintf("URL: %s\nExpire: %s\nShare: %s", r.URL, fmtExpiry(expire), r.Share)
	if method == "PUT" {
		r.ShareType = "upload"
		r.Command = fmt.Sprintf("curl -T <FILE> '%s'", r.Share)
		human = fmt.Sprintf("URL: %s\nExpire: %s\nShare: %s", r.URL, fmtExpiry(expire), r.Command)
	}
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human)
}

// fmtExpiry renders a lifetime as mc does: "7 days 0 hours 0 minutes 0 seconds".
func fmtExpiry(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%d days %d hours %d minutes %d seconds", s/86400, s%86400/3600, s%3600/60, s%60)
}
