package objcmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// lockFlags are the flags retention and legalhold share.
type lockFlags struct {
	versionID string
	recursive bool
	versions  bool
	bypass    bool
	dflt      bool
}

// newRetentionCmd is "retention set|get|clear", mc's verbs for object lock
// retention: on objects (one, or every one under a prefix with
// --recursive) or, with --default, the bucket's default retention.
func newRetentionCmd(opts *cmdutil.Options) *cobra.Command {
	var f lockFlags
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "Set, get or clear object lock retention on objects or a bucket's default",
		Long: `Retention keeps an object version from being deleted or overwritten until a
date, in a bucket created with object lock (mb --with-lock). GOVERNANCE
retention can be shortened or cleared by a user allowed
s3:BypassGovernanceRetention (--bypass); COMPLIANCE retention can only be
extended, by anyone, until it expires. VALIDITY is a number of days or years:
30d, 1y. --default works on the bucket's default retention, applied to every
new version. MODE and VALIDITY may come before the target, as mc has them.`,
		Example: `  twinlake retention set site1/records/2024/report.pdf COMPLIANCE 7y
  twinlake retention set --recursive site1/records/2024/ GOVERNANCE 30d
  twinlake retention set --default site1/records GOVERNANCE 90d
  twinlake retention get --version-id 3f1c... site1/records/2024/report.pdf
  twinlake retention clear --bypass site1/records/draft.txt
  twinlake retention clear --default site1/records`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.versionID, "version-id", "", "this version of the object")
	pf.BoolVarP(&f.recursive, "recursive", "r", false, "every object under the prefix")
	pf.BoolVar(&f.versions, "versions", false, "with --recursive: every version, not only the latest")
	pf.BoolVar(&f.dflt, "default", false, "the bucket's default retention")
	cmd.AddCommand(
		&cobra.Command{
			Use:   "set ALIAS/BUCKET[/PREFIX] MODE VALIDITY",
			Short: "Set retention (GOVERNANCE or COMPLIANCE for VALIDITY, like 30d or 1y)",
			Args:  cobra.ExactArgs(3),
			RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, a []string) error {
				target, mode, validity, err := retentionSetArgs(a)
				if err != nil {
					return err
				}
				return runRetention(cmd, opts, f, "set", target, mode, validity)
			}),
		},
		&cobra.Command{
			Use:     "get ALIAS/BUCKET[/PREFIX]",
			Short:   "Show retention",
			Aliases: []string{"info"},
			Args:    cobra.ExactArgs(1),
			RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, a []string) error {
				return runRetention(cmd, opts, f, "get", a[0], "", validity{})
			}),
		},
		&cobra.Command{
			Use:   "clear ALIAS/BUCKET[/PREFIX]",
			Short: "Clear retention (GOVERNANCE needs --bypass while it runs)",
			Args:  cobra.ExactArgs(1),
			RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, a []string) error {
				return runRetention(cmd, opts, f, "clear", a[0], "", validity{})
			}),
		},
	)
	for _, sub := range cmd.Commands() {
		if sub.Name() != "get" {
			sub.Flags().BoolVar(&f.bypass, "bypass", false, "bypass governance retention (needs s3:BypassGovernanceRetention)")
		}
	}
	return cmd
}

// validity is a retention period: N days or N years.
type validity struct {
	n     uint
	years bool
}

func (v validity) String() string {
	if v.years {
		return strconv.Itoa(int(v.n)) + "y"
	}
	return strconv.Itoa(int(v.n)) + "d"
}

// until is the date a retention of v set at now runs to.
func (v validity) until(now time.Time) time.Time {
	if v.years {
		return now.AddDate(int(v.n), 0, 0)
	}
	return now.AddDate(0, 0, int(v.n))
}

// parseValidity reads mc's VALIDITY: a positive number of days (30d) or
// years (1y).
func parseValidity(s string) (validity, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < 2 {
		return validity{}, fmt.Errorf("validity %q: want a number of days or years, like 30d or 1y", s)
	}
	n, err := strconv.ParseUint(s[:len(s)-1], 10, 32)
	if err != nil || n == 0 {
		return validity{}, fmt.Errorf("validity %q: want a positive number of days or years, like 30d or 1y", s)
	}
	switch s[len(s)-1] {
	case 'd':
		return validity{n: uint(n)}, nil
	case 'y':
		return validity{n: uint(n), years: true}, nil
	}
	return validity{}, fmt.Errorf("validity %q: the unit is d (days) or y (years)", s)
}

// parseMode reads a retention mode in any case.
func parseMode(s string) (minio.RetentionMode, bool) {
	m := minio.RetentionMode(strings.ToUpper(s))
	return m, m.IsValid()
}

// retentionSetArgs accepts TARGET MODE VALIDITY and mc's MODE VALIDITY
// TARGET.
func retentionSetArgs(a []string) (target string, mode minio.RetentionMode, v validity, err error) {
	if _, ok := parseMode(a[0]); ok {
		a = []string{a[2], a[0], a[1]}
	}
	mode, ok := parseMode(a[1])
	if !ok {
		return "", "", v, fmt.Errorf("mode %q: want GOVERNANCE or COMPLIANCE", a[1])
	}
	v, err = parseValidity(a[2])
	return a[0], mode, v, err
}

// retentionResult is one line of a retention command's answer.
type retentionResult struct {
	Status      string `json:"status"`
	Op          string `json:"op"`
	Name        string `json:"name"`
	VersionID   string `json:"versionId,omitempty"`
	Mode        string `json:"mode,omitempty"`
	RetainUntil string `json:"retainUntil,omitempty"`
	// For --default: whether the bucket has object lock and its default
	// retention's validity.
	Default  bool   `json:"default,omitempty"`
	Enabled  *bool  `json:"enabled,omitempty"`
	Validity string `json:"validity,omitempty"`
}

func (r retentionResult) human() string {
	name := r.Name
	if r.VersionID != "" {
		name += " (version " + r.VersionID + ")"
	}
	switch {
	case r.Default && r.Op == "get" && r.Mode == "":
		return fmt.Sprintf("%s: object lock enabled, no default retention.", name)
	case r.Default && r.Op == "get":
		return fmt.Sprintf("%s: default retention %s %s.", name, r.Mode, r.Validity)
	case r.Default && r.Op == "set":
		return fmt.Sprintf("Default retention of %s set to %s %s.", name, r.Mode, r.Validity)
	case r.Default:
		return fmt.Sprintf("Default retention of %s cleared.", name)
	case r.Op == "get" && r.Mode == "":
		return fmt.Sprintf("%s: no retention.", name)
	case r.Op == "get":
		return fmt.Sprintf("%s: %s until %s.", name, r.Mode, r.RetainUntil)
	case r.Op == "set":
		return fmt.Sprintf("Retention of %s set to %s until %s.", name, r.Mode, r.RetainUntil)
	}
	return fmt.Sprintf("Retention of %s cleared.", name)
}

func runRetention(cmd *cobra.Command, opts *cmdutil.Options, f lockFlags, op, arg string, mode minio.RetentionMode, v validity) error {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return err
	}
	if err := f.check(t, arg, op == "get"); err != nil {
		return err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	name := cmdutil.FmtTarget(cmdutil.Target{Alias: t.Alias, Bucket: t.Bucket})
	if f.dflt || (t.Key == "" && !f.recursive && op == "get") {
		r, err := bucketRetention(ctx, c, t.Bucket, op, mode, v)
		if err != nil {
			return err
		}
		r.Status, r.Op, r.Name, r.Default = "success", op, name, true
		return cmdutil.PrintResult(cmd.OutOrStdout(), opts, r, r.human())
	}
	until := v.until(time.Now())
	one := func(key, versionID string) (retentionResult, error) {
		r := retentionResult{Status: "success", Op: op, Name: name + "/" + key, VersionID: versionID}
		what := op + " retention of " + r.Name
		switch op {
		case "set":
			err = c.PutObjectRetention(ctx, t.Bucket, key, minio.PutObjectRetentionOptions{VersionID: versionID,
				Mode: &mode, RetainUntilDate: &until, GovernanceBypass: f.bypass})
			r.Mode, r.RetainUntil = string(mode), until.UTC().Format(time.RFC3339)
		case "clear":
			err = c.PutObjectRetention(ctx, t.Bucket, key, minio.PutObjectRetentionOptions{VersionID: versionID, GovernanceBypass: f.bypass})
		default:
			var m *minio.RetentionMode
			var u *time.Time
			m, u, err = c.GetObjectRetention(ctx, t.Bucket, key, versionID)
			if cmdutil.S3Code(err) == "NoSuchObjectLockConfiguration" {
				err = nil
			} else if err == nil && m != nil && u != nil {
				r.Mode, r.RetainUntil = string(*m), u.UTC().Format(time.RFC3339)
			}
		}
		return r, cmdutil.S3Err(what, err)
	}
	return forEachObject(cmd, opts, c, t, f, func(key, versionID string) (fmt.Stringer, any, error) {
		r, err := one(key, versionID)
		return stringer(r.human), r, err
	})
}

// bucketRetention gets, sets or clears a bucket's default retention.
func bucketRetention(ctx context.Context, c *minio.Client, bucket, op string, mode minio.RetentionMode, v validity) (retentionResult, error) {
	var r retentionResult
	switch op {
	case "set":
		unit := minio.Days
		if v.years {
			unit = minio.Years
		}
		n := v.n
		r.Mode, r.Validity = string(mode), v.String()
		return r, cmdutil.S3Err("set the default retention of "+bucket, c.SetObjectLockConfig(ctx, bucket, &mode, &n, &unit))
	case "clear":
		return r, cmdutil.S3Err("clear the default retention of "+bucket, c.SetObjectLockConfig(ctx, bucket, nil, nil, nil))
	}
	enabled, m, n, unit, err := c.GetObjectLockConfig(ctx, bucket)
	if cmdutil.S3Code(err) == "ObjectLockConfigurationNotFoundError" {
		off := false
		r.Enabled = &off
		return r, fmt.Errorf("%s has no object lock (create it with mb --with-lock)", bucket)
	}
	if err != nil {
		return r, cmdutil.S3Err("get the default retention of "+bucket, err)
	}
	on := enabled == "Enabled"
	r.Enabled = &on
	if m != nil && n != nil && unit != nil {
		r.Mode = string(*m)
		r.Validity = validity{n: *n, years: *unit == minio.Years}.String()
	}
	return r, nil
}

// check validates the flags against the target.
func (f lockFlags) check(t cmdutil.Target, arg string, get bool) error {
	switch {
	case f.dflt && (t.Key != "" || f.recursive || f.versionID != ""):
		return fmt.Errorf("--default applies to a bucket (ALIAS/BUCKET), without --recursive or --version-id")
	case f.recursive && f.versionID != "":
		return errors.New("--version-id names one object: not with --recursive")
	case f.versions && !f.recursive:
		return errors.New("--versions goes with --recursive")
	case !f.dflt && !f.recursive && t.Key == "" && !get:
		return fmt.Errorf("%q names a bucket: give a key, --recursive for every object, or --default", arg)
	}
	return nil
}

type stringer func() string

func (s stringer) String() string { return s() }

// forEachObject applies fn to the target object, or with --recursive to
// every object (every version with --versions) under the prefix, printing
// each result; failures are reported per object and the command exits 1.
func forEachObject(cmd *cobra.Command, opts *cmdutil.Options, c *minio.Client, t cmdutil.Target, f lockFlags,
	fn func(key, versionID string) (fmt.Stringer, any, error)) error {
	out := cmd.OutOrStdout()
	if !f.recursive {
		h, v, err := fn(t.Key, f.versionID)
		if err != nil {
			return err
		}
		return cmdutil.PrintResult(out, opts, v, h.String())
	}
	failed, n := 0, 0
	for o := range c.ListObjects(cmd.Context(), t.Bucket, minio.ListObjectsOptions{Prefix: t.Key, Recursive: true, WithVersions: f.versions}) {
		if o.Err != nil {
			return cmdutil.S3Err("list "+cmdutil.FmtTarget(t), o.Err)
		}
		if o.IsDeleteMarker {
			continue
		}
		vid := ""
		if f.versions {
			vid = o.VersionID
		}
		n++
		h, v, err := fn(o.Key, vid)
		if err != nil {
			cmdutil.PrintItemErr(cmd, opts, err)
			failed++
			continue
		}
		if err := cmdutil.PrintResult(out, opts, v, h.String()); err != nil {
			return err
		}
	}
	if failed > 0 {
		return cmdutil.ItemsFailed(failed, "objects")
	}
	if n == 0 && !opts.JSON {
		fmt.Fprintf(out, "No objects under %s.\n", cmdutil.FmtTarget(t))
	}
	return nil
}
