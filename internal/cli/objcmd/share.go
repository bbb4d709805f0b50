package objcmd

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// shareMaxExpiry is SigV4's limit on a presigned URL's lifetime.
const shareMaxExpiry = 7 * 24 * time.Hour

// newShareCmd is "share download|upload": presigned URLs that let someone
// without credentials read or write one object until they expire.
func newShareCmd(opts *cmdutil.Options) *cobra.Command {
	var (
		expire      time.Duration
		versionID   string
		contentType string
	)
	cmd := &cobra.Command{
		Use:   "share",
		Short: "Make presigned URLs to download or upload one object",
		Long: `Print a presigned URL: anyone holding it can GET (download) or upload
that one object, with the alias's permissions, until it expires (--expire,
default and at most 7 days). Nothing is stored on the server: the only way
to revoke a URL is to revoke the alias's key.

share upload makes a signed POST policy, as mc does, and prints the curl
command that uploads a file through it (the form fields a browser form
needs; --json also lists them as formData). A KEY ending in "/" allows any
name under that prefix: the uploaded file's own name is used.`,
		Example: `  twinlake share download site1/docs/report.pdf
  twinlake share download --expire 1h site1/docs/report.pdf
  twinlake share upload --expire 30m site1/inbox/upload.bin
  twinlake share upload --content-type image/png site1/inbox/
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
				return shareObject(cmd, opts, args[0], method, versionID, contentType, expire)
			}),
		}
	}
	dl := newSub("download", "Make a presigned URL that downloads an object", "GET")
	dl.Flags().StringVar(&versionID, "version-id", "", "share this version of the object")
	ul := newSub("upload", "Make a signed POST policy (and a curl command) that uploads an object", "POST")
	ul.Flags().StringVar(&contentType, "content-type", "", "the upload must have this Content-Type")
	cmd.AddCommand(dl, ul)
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
	// PostURL and FormData are an upload's form: the fields to send, in
	// a multipart/form-data POST to PostURL, before the file.
	PostURL  string      `json:"postURL,omitempty"`
	FormData []formField `json:"formData,omitempty"`
}

// formField is one field of an upload form.
type formField struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func shareObject(cmd *cobra.Command, opts *cmdutil.Options, arg, method, versionID, contentType string, expire time.Duration) error {
	t, err := cmdutil.RequireKey(arg)
	if err != nil {
		return err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	if method == "POST" {
		return shareUpload(cmd, opts, c, t, contentType, expire)
	}
	q := url.Values{}
	if versionID != "" {
		q.Set("versionId", versionID)
	}
	u, err := c.PresignedGetObject(cmd.Context(), t.Bucket, t.Key, expire, q)
	if err != nil {
		return cmdutil.S3Err("presign "+cmdutil.FmtTarget(t), err)
	}
	r := shareResult{Status: "success", URL: cmdutil.FmtTarget(t), Share: u.String(), ShareType: "download",
		Expire: expire.String(), ExpireSeconds: expire.Seconds(), ExpiresAt: time.Now().Add(expire).UTC().Truncate(time.Second)}
	human := fmt.Sprintf("URL: %s\nExpire: %s\nShare: %s", r.URL, fmtExpiry(expire), r.Share)
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human)
}

// shareUpload signs a POST policy for the key (or, for a key ending in
// "/", any key under it, named after the uploaded file) and prints mc's
// curl command: the form fields, then file=@<FILE>.
func shareUpload(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, contentType string, expire time.Duration) error {
	p := minio.NewPostPolicy()
	prefix := strings.HasSuffix(t.Key, "/")
	err := p.SetBucket(t.Bucket)
	if err == nil && prefix {
		err = p.SetKeyStartsWith(t.Key)
	} else if err == nil {
		err = p.SetKey(t.Key)
	}
	expiresAt := time.Now().Add(expire).UTC().Truncate(time.Second)
	if err == nil {
		err = p.SetExpires(expiresAt)
	}
	if err == nil && contentType != "" {
		err = p.SetContentType(contentType)
	}
	if err != nil {
		return err
	}
	u, form, err := c.PresignedPostPolicy(cmd.Context(), p)
	if err != nil {
		return cmdutil.S3Err("presign "+cmdutil.FmtTarget(t), err)
	}
	if prefix {
		form["key"] = t.Key + "${filename}"
	}
	names := make([]string, 0, len(form))
	for k := range form {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("curl " + shellQuote(u.String()))
	fields := make([]formField, 0, len(names))
	for _, k := range names {
		b.WriteString(" -F " + shellQuote(k+"="+form[k]))
		fields = append(fields, formField{k, form[k]})
	}
	b.WriteString(" -F file=@<FILE>")
	r := shareResult{Status: "success", URL: cmdutil.FmtTarget(t), Share: b.String(), ShareType: "upload",
		Expire: expire.String(), ExpireSeconds: expire.Seconds(), ExpiresAt: expiresAt,
		Command: b.String(), PostURL: u.String(), FormData: fields}
	human := fmt.Sprintf("URL: %s\nExpire: %s\nShare: %s", r.URL, fmtExpiry(expire), r.Command)
	return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, human)
}

// shellQuote quotes s for a POSIX shell unless it needs no quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=@%+,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fmtExpiry renders a lifetime as mc does: "7 days 0 hours 0 minutes 0 seconds".
func fmtExpiry(d time.Duration) string {
	s := int64(d / time.Second)
	return fmt.Sprintf("%d days %d hours %d minutes %d seconds", s/86400, s%86400/3600, s%3600/60, s%60)
}
