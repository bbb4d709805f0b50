package objcmd

import (
	"fmt"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// newLegalHoldCmd is "legalhold set|get|clear", mc's verbs for object lock
// legal holds on objects (one, or every one under a prefix with
// --recursive).
func newLegalHoldCmd(opts *cmdutil.Options) *cobra.Command {
	var f lockFlags
	cmd := &cobra.Command{
		Use:   "legalhold",
		Short: "Set, get or clear the object lock legal hold of objects",
		Long: `A legal hold keeps an object version from being deleted, whatever its
retention, until the hold is cleared (by a user allowed s3:PutObjectLegalHold).
The bucket must have been created with object lock (mb --with-lock).`,
		Example: `  twinlake legalhold set site1/records/2024/report.pdf
  twinlake legalhold set --recursive site1/records/case-42/
  twinlake legalhold get --version-id 3f1c... site1/records/2024/report.pdf
  twinlake legalhold clear site1/records/2024/report.pdf`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.versionID, "version-id", "", "this version of the object")
	pf.BoolVarP(&f.recursive, "recursive", "r", false, "every object under the prefix")
	pf.BoolVar(&f.versions, "versions", false, "with --recursive: every version, not only the latest")
	for _, op := range []struct{ use, short string }{
		{"set", "Turn the legal hold on"},
		{"get", "Show the legal hold"},
		{"clear", "Turn the legal hold off"},
	} {
		op := op
		sub := &cobra.Command{
			Use: op.use + " ALIAS/BUCKET/KEY", Short: op.short, Args: cobra.ExactArgs(1),
			RunE: cmdutil.WithJSONErrors(opts, func(cmd *cobra.Command, a []string) error {
				return runLegalHold(cmd, opts, f, op.use, a[0])
			}),
		}
		if op.use == "get" {
			sub.Aliases = []string{"info"}
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

// legalHoldResult is one line of a legalhold command's answer.
type legalHoldResult struct {
	Status    string `json:"status"`
	Op        string `json:"op"`
	Name      string `json:"name"`
	VersionID string `json:"versionId,omitempty"`
	LegalHold string `json:"legalHold"`
}

func (r legalHoldResult) human() string {
	name := r.Name
	if r.VersionID != "" {
		name += " (version " + r.VersionID + ")"
	}
	switch r.Op {
	case "set":
		return fmt.Sprintf("Legal hold set on %s.", name)
	case "clear":
		return fmt.Sprintf("Legal hold cleared on %s.", name)
	}
	return fmt.Sprintf("%s: legal hold %s.", name, r.LegalHold)
}

func runLegalHold(cmd *cobra.Command, opts *cmdutil.Options, f lockFlags, op, arg string) error {
	t, err := cmdutil.RequireBucket(arg)
	if err != nil {
		return err
	}
	if err := f.check(t, arg, false); err != nil {
		return err
	}
	c, err := opts.S3Client(t.Alias)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	bucketName := cmdutil.FmtTarget(cmdutil.Target{Alias: t.Alias, Bucket: t.Bucket})
	return forEachObject(cmd, opts, c, t, f, func(key, versionID string) (fmt.Stringer, any, error) {
		r := legalHoldResult{Status: "success", Op: op, Name: bucketName + "/" + key, VersionID: versionID}
		var err error
		switch op {
		case "set", "clear":
			st := minio.LegalHoldEnabled
			if op == "clear" {
				st = minio.LegalHoldDisabled
			}
			err = c.PutObjectLegalHold(ctx, t.Bucket, key, minio.PutObjectLegalHoldOptions{VersionID: versionID, Status: &st})
			r.LegalHold = string(st)
		default:
			var st *minio.LegalHoldStatus
			st, err = c.GetObjectLegalHold(ctx, t.Bucket, key, minio.GetObjectLegalHoldOptions{VersionID: versionID})
			r.LegalHold = string(minio.LegalHoldDisabled)
			if cmdutil.S3Code(err) == "NoSuchObjectLockConfiguration" {
				err = nil
			} else if err == nil && st != nil {
				r.LegalHold = string(*st)
			}
		}
		return stringer(r.human), r, cmdutil.S3Err(op+" legal hold of "+r.Name, err)
	})
}
