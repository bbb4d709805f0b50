package objcmd

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

func newILMCmd(opts *cmdutil.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ilm",
		Short: "Manage bucket lifecycle rules (expiry of objects, noncurrent versions, delete markers, uploads)",
		Long: `Bucket lifecycle rules expire objects a number of days after they were written
(or on a date), remove noncurrent versions some days after they were replaced
(keeping the newest ones you ask for), remove delete markers left alone and abort
incomplete multipart uploads. Rules select objects by prefix, tags and size.
Every site runs the rules; what they delete replicates like any delete.

export prints the configuration as JSON; import reads that JSON back (from a
file or standard input).`,
		Example: `  twinlake ilm rule add --expire-days 30 --prefix logs/ site1/data
  twinlake ilm rule ls site1/data
  twinlake ilm export site1/data > ilm.json
  twinlake ilm import site1/data < ilm.json`,
		Args: cobra.ArbitraryArgs,
		RunE: cmdutil.RequireSubcommand,
	}
	rule := &cobra.Command{
		Use:   "rule",
		Short: "Add, list, edit or remove lifecycle rules",
		Args:  cobra.ArbitraryArgs,
		RunE:  cmdutil.RequireSubcommand,
	}
	rule.AddCommand(newILMRuleAddCmd(opts), newILMRuleEditCmd(opts), newILMRuleLsCmd(opts), newILMRuleRmCmd(opts))
	cmd.AddCommand(rule, newILMExportCmd(opts), newILMImportCmd(opts))
	return cmd
}

// ilmRuleFlags are the rule settings add and edit take, as mc names them.
type ilmRuleFlags struct {
	id, prefix, tags, expireDate   string
	expireDays, noncurrentDays     int
	noncurrentNewer, abortDays     int
	sizeLT, sizeGT                 string
	expireDeleteMarker             bool
	disable, enable                bool
	transitionDays, storageClass   string
	noncurrentTransitionDays, tier string
}

func (f *ilmRuleFlags) register(cmd *cobra.Command, edit bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.id, "id", "", "the rule's ID (add: generated when not given; edit: required)")
	fl.StringVar(&f.prefix, "prefix", "", "select objects whose key starts with this prefix")
	fl.StringVar(&f.tags, "tags", "", `select objects with these tags, as "key1=value1&key2=value2"`)
	fl.IntVar(&f.expireDays, "expire-days", 0, "expire objects this many days after they were written")
	fl.StringVar(&f.expireDate, "expire-date", "", "expire objects on this date (YYYY-MM-DD, midnight UTC)")
	fl.BoolVar(&f.expireDeleteMarker, "expire-delete-marker", false, "remove delete markers left with no other version")
	fl.IntVar(&f.noncurrentDays, "noncurrent-expire-days", 0, "remove noncurrent versions this many days after they were replaced")
	fl.IntVar(&f.noncurrentNewer, "noncurrent-expire-newer", 0, "keep this many newest noncurrent versions whatever their age")
	fl.IntVar(&f.abortDays, "abort-incomplete-days", 0, "abort multipart uploads not completed this many days after they began")
	fl.StringVar(&f.sizeLT, "size-lt", "", "select objects smaller than this size (e.g. 10MiB)")
	fl.StringVar(&f.sizeGT, "size-gt", "", "select objects larger than this size (e.g. 1GiB)")
	fl.BoolVar(&f.disable, "disable", false, "the rule is disabled (kept, not applied)")
	if edit {
		fl.BoolVar(&f.enable, "enable", false, "enable a disabled rule")
	}
	// mc's transition flags: refused, twinlake has one storage class.
	fl.StringVar(&f.transitionDays, "transition-days", "", "not supported: twinlake has one storage class")
	fl.StringVar(&f.storageClass, "storage-class", "", "not supported: twinlake has one storage class")
	fl.StringVar(&f.noncurrentTransitionDays, "noncurrent-transition-days", "", "not supported: twinlake has one storage class")
	fl.StringVar(&f.tier, "noncurrent-transition-tier", "", "not supported: twinlake has one storage class")
}

// apply sets on r what the flags given on cmd say.
func (f *ilmRuleFlags) apply(cmd *cobra.Command, r *lifecycle.Rule) error {
	set := cmd.Flags().Changed
	for _, name := range []string{"transition-days", "storage-class", "noncurrent-transition-days", "noncurrent-transition-tier"} {
		if set(name) {
			return fmt.Errorf("--%s: transitions are not supported: twinlake has one storage class and no remote tiers", name)
		}
	}
	if set("disable") && set("enable") {
		return fmt.Errorf("--enable and --disable contradict each other")
	}
	if set("disable") {
		r.Status = "Enabled"
		if f.disable {
			r.Status = "Disabled"
		}
	}
	if set("enable") && f.enable {
		r.Status = "Enabled"
	}
	prefix, tags, lt, gt := rulePrefix(r), ruleTags(r), ruleSizeLT(r), ruleSizeGT(r)
	if set("prefix") {
		prefix = f.prefix
	}
	if set("tags") {
		var err error
		if tags, err = parseILMTags(f.tags); err != nil {
			return err
		}
	}
	for _, s := range []struct {
		name, val string
		dst       *int64
	}{{"size-lt", f.sizeLT, &lt}, {"size-gt", f.sizeGT, &gt}} {
		if !set(s.name) {
			continue
		}
		n, err := parseByteSize(s.val)
		if err != nil {
			return fmt.Errorf("--%s: %w", s.name, err)
		}
		*s.dst = n
	}
	r.Prefix = ""
	r.RuleFilter = lifecycle.Filter{}
	switch {
	case len(tags) > 1 || len(tags) == 1 && (prefix != "" || lt > 0 || gt > 0) || (lt > 0 || gt > 0) && prefix != "":
		r.RuleFilter.And = lifecycle.And{Prefix: prefix, Tags: tags, ObjectSizeLessThan: lt, ObjectSizeGreaterThan: gt}
	case len(tags) == 1:
		r.RuleFilter.Tag = tags[0]
	case lt > 0 || gt > 0:
		r.RuleFilter.ObjectSizeLessThan, r.RuleFilter.ObjectSizeGreaterThan = lt, gt
	default:
		r.RuleFilter.Prefix = prefix
	}
	if set("expire-days") {
		r.Expiration = lifecycle.Expiration{Days: lifecycle.ExpirationDays(f.expireDays)}
	}
	if set("expire-date") {
		t, err := time.Parse("2006-01-02", f.expireDate)
		if err != nil {
			return fmt.Errorf("--expire-date %q: want YYYY-MM-DD", f.expireDate)
		}
		r.Expiration = lifecycle.Expiration{Date: lifecycle.ExpirationDate{Time: t}}
	}
	if set("expire-delete-marker") {
		if f.expireDeleteMarker && (r.Expiration.Days > 0 || !r.Expiration.Date.IsZero()) {
			return fmt.Errorf("--expire-delete-marker cannot go with --expire-days or --expire-date: an expiry by days already removes delete markers left alone")
		}
		r.Expiration.DeleteMarker = lifecycle.ExpireDeleteMarker(f.expireDeleteMarker)
	}
	if set("noncurrent-expire-days") {
		r.NoncurrentVersionExpiration.NoncurrentDays = lifecycle.ExpirationDays(f.noncurrentDays)
	}
	if set("noncurrent-expire-newer") {
		r.NoncurrentVersionExpiration.NewerNoncurrentVersions = f.noncurrentNewer
	}
	if set("abort-incomplete-days") {
		r.AbortIncompleteMultipartUpload.DaysAfterInitiation = lifecycle.ExpirationDays(f.abortDays)
	}
	if r.Expiration.IsNull() && r.NoncurrentVersionExpiration.IsDaysNull() && r.AbortIncompleteMultipartUpload.IsDaysNull() {
		return fmt.Errorf("the rule needs an action: --expire-days, --expire-date, --expire-delete-marker, --noncurrent-expire-days or --abort-incomplete-days")
	}
	return nil
}

func rulePrefix(r *lifecycle.Rule) string {
	switch {
	case r.Prefix != "":
		return r.Prefix
	case r.RuleFilter.Prefix != "":
		return r.RuleFilter.Prefix
	}
	return r.RuleFilter.And.Prefix
}

func ruleTags(r *lifecycle.Rule) []lifecycle.Tag {
	if !r.RuleFilter.Tag.IsEmpty() {
		return []lifecycle.Tag{r.RuleFilter.Tag}
	}
	return slices.Clone(r.RuleFilter.And.Tags)
}

func ruleSizeLT(r *lifecycle.Rule) int64 {
	return max(r.RuleFilter.ObjectSizeLessThan, r.RuleFilter.And.ObjectSizeLessThan)
}

func ruleSizeGT(r *lifecycle.Rule) int64 {
	return max(r.RuleFilter.ObjectSizeGreaterThan, r.RuleFilter.And.ObjectSizeGreaterThan)
}

// parseILMTags reads "k1=v1&k2=v2" (URL-encoded, as mc takes it).
func parseILMTags(s string) ([]lifecycle.Tag, error) {
	if s == "" {
		return nil, nil
	}
	q, err := url.ParseQuery(s)
	if err != nil {
		return nil, fmt.Errorf("--tags %q: %w", s, err)
	}
	var out []lifecycle.Tag
	for k, vs := range q {
		if k == "" || len(vs) != 1 {
			return nil, fmt.Errorf("--tags %q: each tag once, as key=value", s)
		}
		out = append(out, lifecycle.Tag{Key: k, Value: vs[0]})
	}
	slices.SortFunc(out, func(a, b lifecycle.Tag) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// openILM checks an ALIAS/BUCKET argument and opens a client for it;
// what names the command in errors.
func openILM(opts *cmdutil.Options, verb, arg string) (cmdutil.Target, *minio.Client, string, error) {
	t, c, err := opts.BucketClient(arg)
	return t, c, verb + " " + arg, err
}

// loadILM reads a bucket's lifecycle configuration; none is an empty one.
func loadILM(cmd *cobra.Command, c *minio.Client, bucket, what string) (*lifecycle.Configuration, error) {
	cfg, err := c.GetBucketLifecycle(cmd.Context(), bucket)
	if err != nil {
		if cmdutil.S3Code(err) == "NoSuchLifecycleConfiguration" {
			return lifecycle.NewConfiguration(), nil
		}
		return nil, cmdutil.S3Err(what, err)
	}
	return cfg, nil
}

func saveILM(cmd *cobra.Command, c *minio.Client, bucket, what string, cfg *lifecycle.Configuration) error {
	if len(cfg.Rules) == 0 {
		cfg = nil // the last rule gone: remove the configuration
	}
	if err := c.SetBucketLifecycle(cmd.Context(), bucket, cfg); err != nil {
		return cmdutil.S3Err(what, err)
	}
	return nil
}

func newRuleID() string {
	var b [10]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newILMRuleAddCmd(opts *cmdutil.Options) *cobra.Command {
	var f ilmRuleFlags
	cmd := &cobra.Command{
		Use:   "add ALIAS/BUCKET",
		Short: "Add a lifecycle rule to a bucket",
		Example: `  twinlake ilm rule add --expire-days 90 --prefix logs/ site1/data
  twinlake ilm rule add --noncurrent-expire-days 7 --noncurrent-expire-newer 3 site1/data
  twinlake ilm rule add --expire-delete-marker site1/data
  twinlake ilm rule add --expire-days 1 --tags "class=scratch" --size-gt 1MiB site1/data`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, what, err := openILM(opts, "ilm rule add", args[0])
			if err != nil {
				return err
			}
			r := lifecycle.Rule{ID: f.id, Status: "Enabled"}
			if r.ID == "" {
				r.ID = newRuleID()
			}
			if err := f.apply(cmd, &r); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			cfg, err := loadILM(cmd, c, t.Bucket, what)
			if err != nil {
				return err
			}
			for _, old := range cfg.Rules {
				if old.ID == r.ID {
					return fmt.Errorf("%s: a rule with ID %q exists (use `ilm rule edit`)", what, r.ID)
				}
			}
			cfg.Rules = append(cfg.Rules, r)
			if err := saveILM(cmd, c, t.Bucket, what, cfg); err != nil {
				return err
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"status": "success", "target": args[0], "id": r.ID},
				fmt.Sprintf("Lifecycle configuration rule added with ID `%s` to %s.", r.ID, args[0]))
		}),
	}
	f.register(cmd, false)
	return cmd
}

func newILMRuleEditCmd(opts *cmdutil.Options) *cobra.Command {
	var f ilmRuleFlags
	cmd := &cobra.Command{
		Use:     "edit --id ID ALIAS/BUCKET",
		Short:   "Change a lifecycle rule; the settings not given stay",
		Example: `  twinlake ilm rule edit --id logs --expire-days 30 site1/data`,
		Args:    cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, what, err := openILM(opts, "ilm rule edit", args[0])
			if err != nil {
				return err
			}
			if f.id == "" {
				return fmt.Errorf("%s: --id is required", what)
			}
			cfg, err := loadILM(cmd, c, t.Bucket, what)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(cfg.Rules, func(r lifecycle.Rule) bool { return r.ID == f.id })
			if i < 0 {
				return fmt.Errorf("%s: no rule with ID %q", what, f.id)
			}
			r := cfg.Rules[i]
			if cmd.Flags().Changed("expire-days") || cmd.Flags().Changed("expire-date") || cmd.Flags().Changed("expire-delete-marker") {
				r.Expiration = lifecycle.Expiration{}
			}
			if err := f.apply(cmd, &r); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			cfg.Rules[i] = r
			if err := saveILM(cmd, c, t.Bucket, what, cfg); err != nil {
				return err
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"status": "success", "target": args[0], "id": r.ID},
				fmt.Sprintf("Lifecycle configuration rule with ID `%s` modified in %s.", r.ID, args[0]))
		}),
	}
	f.register(cmd, true)
	return cmd
}

// ilmRuleJSON is one rule as `ilm rule ls --json` prints it.
type ilmRuleJSON struct {
	Status  string         `json:"status"`
	Target  string         `json:"target"`
	Rule    lifecycle.Rule `json:"rule"`
	Summary ilmRuleSummary `json:"summary"`
}

type ilmRuleSummary struct {
	ID          string `json:"id"`
	Enabled     bool   `json:"enabled"`
	Prefix      string `json:"prefix"`
	Tags        string `json:"tags,omitempty"`
	Size        string `json:"size,omitempty"`
	Expiry      string `json:"expiry,omitempty"`
	Noncurrent  string `json:"noncurrent,omitempty"`
	DeleteMarks bool   `json:"expireDeleteMarker,omitempty"`
	AbortDays   int    `json:"abortIncompleteDays,omitempty"`
}

func summarizeRule(r lifecycle.Rule) ilmRuleSummary {
	s := ilmRuleSummary{ID: r.ID, Enabled: r.Status == "Enabled", Prefix: rulePrefix(&r)}
	var tags []string
	for _, t := range ruleTags(&r) {
		tags = append(tags, t.Key+"="+t.Value)
	}
	s.Tags = strings.Join(tags, "&")
	var size []string
	if gt := ruleSizeGT(&r); gt > 0 {
		size = append(size, ">"+cmdutil.FmtBytes(gt))
	}
	if lt := ruleSizeLT(&r); lt > 0 {
		size = append(size, "<"+cmdutil.FmtBytes(lt))
	}
	s.Size = strings.Join(size, " ")
	switch {
	case r.Expiration.Days > 0:
		s.Expiry = strconv.Itoa(int(r.Expiration.Days)) + " days"
	case !r.Expiration.Date.IsZero():
		s.Expiry = r.Expiration.Date.Format("2006-01-02")
	}
	s.DeleteMarks = bool(r.Expiration.DeleteMarker)
	if n := r.NoncurrentVersionExpiration; n.NoncurrentDays > 0 {
		s.Noncurrent = strconv.Itoa(int(n.NoncurrentDays)) + " days"
		if n.NewerNoncurrentVersions > 0 {
			s.Noncurrent += fmt.Sprintf(", keep %d newest", n.NewerNoncurrentVersions)
		}
	}
	s.AbortDays = int(r.AbortIncompleteMultipartUpload.DaysAfterInitiation)
	return s
}

func newILMRuleLsCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "ls ALIAS/BUCKET",
		Aliases: []string{"list"},
		Short:   "List a bucket's lifecycle rules",
		Example: "  twinlake ilm rule ls site1/data",
		Args:    cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, what, err := openILM(opts, "ilm rule ls", args[0])
			if err != nil {
				return err
			}
			cfg, err := loadILM(cmd, c, t.Bucket, what)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if opts.JSON {
				for _, r := range cfg.Rules {
					if err := cmdutil.WriteJSON(out, ilmRuleJSON{Status: "success", Target: args[0], Rule: r, Summary: summarizeRule(r)}); err != nil {
						return err
					}
				}
				return nil
			}
			if len(cfg.Rules) == 0 {
				_, err := fmt.Fprintf(out, "No lifecycle rules on %s.\n", args[0])
				return err
			}
			var b strings.Builder
			tw := cmdutil.NewTable(&b)
			fmt.Fprintln(tw, "ID\tSTATUS\tPREFIX\tTAGS\tSIZE\tEXPIRY\tDEL-MARKER\tNONCURRENT\tABORT-UPLOADS")
			for _, r := range cfg.Rules {
				s := summarizeRule(r)
				status := "Disabled"
				if s.Enabled {
					status = "Enabled"
				}
				abort := "-"
				if s.AbortDays > 0 {
					abort = strconv.Itoa(s.AbortDays) + " days"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\n", s.ID, status, dash(s.Prefix), dash(s.Tags), dash(s.Size),
					dash(s.Expiry), s.DeleteMarks, dash(s.Noncurrent), abort)
			}
			tw.Flush()
			_, err = io.WriteString(out, b.String())
			return err
		}),
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newILMRuleRmCmd(opts *cmdutil.Options) *cobra.Command {
	var id string
	var all, force bool
	cmd := &cobra.Command{
		Use:   "rm (--id ID | --all --force) ALIAS/BUCKET",
		Short: "Remove one lifecycle rule, or all of them",
		Example: `  twinlake ilm rule rm --id logs site1/data
  twinlake ilm rule rm --all --force site1/data`,
		Args: cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, what, err := openILM(opts, "ilm rule rm", args[0])
			if err != nil {
				return err
			}
			switch {
			case id == "" && !all:
				return fmt.Errorf("%s: name the rule with --id, or remove every rule with --all --force", what)
			case id != "" && all:
				return fmt.Errorf("%s: --id and --all contradict each other", what)
			case all && !force:
				return fmt.Errorf("%s: removing every rule needs --force", what)
			}
			cfg, err := loadILM(cmd, c, t.Bucket, what)
			if err != nil {
				return err
			}
			if all {
				if err := c.SetBucketLifecycle(cmd.Context(), t.Bucket, nil); err != nil {
					return cmdutil.S3Err(what, err)
				}
				return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"status": "success", "target": args[0], "id": "*"},
					fmt.Sprintf("Removed every lifecycle rule of %s.", args[0]))
			}
			i := slices.IndexFunc(cfg.Rules, func(r lifecycle.Rule) bool { return r.ID == id })
			if i < 0 {
				return fmt.Errorf("%s: no rule with ID %q", what, id)
			}
			cfg.Rules = slices.Delete(cfg.Rules, i, i+1)
			if err := saveILM(cmd, c, t.Bucket, what, cfg); err != nil {
				return err
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]string{"status": "success", "target": args[0], "id": id},
				fmt.Sprintf("Rule ID `%s` from target %s removed.", id, args[0]))
		}),
	}
	cmd.Flags().StringVar(&id, "id", "", "the rule to remove")
	cmd.Flags().BoolVar(&all, "all", false, "remove every rule")
	cmd.Flags().BoolVar(&force, "force", false, "confirm --all")
	return cmd
}

func newILMExportCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "export ALIAS/BUCKET",
		Short:   "Print a bucket's lifecycle configuration as JSON",
		Example: "  twinlake ilm export site1/data > ilm.json",
		Args:    cobra.ExactArgs(1),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, what, err := openILM(opts, "ilm export", args[0])
			if err != nil {
				return err
			}
			cfg, err := c.GetBucketLifecycle(cmd.Context(), t.Bucket)
			if err != nil {
				if cmdutil.S3Code(err) == "NoSuchLifecycleConfiguration" {
					return fmt.Errorf("%s: the bucket has no lifecycle configuration", what)
				}
				return cmdutil.S3Err(what, err)
			}
			data, err := json.MarshalIndent(cfg, "", " ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), string(data))
			return err
		}),
	}
}

func newILMImportCmd(opts *cmdutil.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "import ALIAS/BUCKET [FILE]",
		Short: "Set a bucket's lifecycle configuration from JSON (as export prints it), from FILE or standard input",
		Example: `  twinlake ilm import site1/data < ilm.json
  twinlake ilm import site1/data ilm.json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, args []string) error {
			t, c, what, err := openILM(opts, "ilm import", args[0])
			if err != nil {
				return err
			}
			var data []byte
			if len(args) == 2 {
				data, err = os.ReadFile(args[1])
			} else {
				data, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
			}
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			cfg := lifecycle.NewConfiguration()
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(cfg); err != nil {
				return fmt.Errorf("%s: not a lifecycle configuration in JSON: %w", what, err)
			}
			if len(cfg.Rules) == 0 {
				return fmt.Errorf("%s: the configuration has no Rules", what)
			}
			if err := c.SetBucketLifecycle(cmd.Context(), t.Bucket, cfg); err != nil {
				return cmdutil.S3Err(what, err)
			}
			return cmdutil.PrintResult(cmd.OutOrStdout(), opts, map[string]any{"status": "success", "target": args[0], "rules": len(cfg.Rules)},
				fmt.Sprintf("Lifecycle configuration imported to %s (%d rules).", args[0], len(cfg.Rules)))
		}),
	}
}
