package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
	"github.com/twinlake/twinlake/internal/adminclient"
)

// jsonError is how a failure prints with --json: mc's shape, one line,
// "status":"error" and what the server said when it said something.
type JSONError struct {
	Status string        `json:"status"`
	Error  JSONErrorBody `json:"error"`
}

// jsonErrorBody carries the S3 error code and request ID when the failure
// is a server response, the message always.
type JSONErrorBody struct {
	Message   string `json:"message"`
	Code      string `json:"code,omitempty"`
	RequestID string `json:"requestId,omitempty"`
}

func NewJSONError(err error) JSONError {
	body := JSONErrorBody{Message: err.Error()}
	var resp minio.ErrorResponse
	var ae *adminclient.Error
	var unreachable *adminclient.UnreachableError
	switch {
	case errors.As(err, &resp):
		body.Code, body.RequestID = resp.Code, resp.RequestID
	case errors.As(err, &ae):
		body.Code, body.RequestID = ae.Code, ae.RequestID
	case errors.As(err, &unreachable):
		body.Code = "Unreachable"
	case errors.Is(err, ErrNoAlias):
		body.Code = "NoSuchAlias"
	}
	return JSONError{Status: "error", Error: body}
}

// jsonPrinted marks an error a command already printed as a JSON line.
type jsonPrinted struct{ error }

func (e jsonPrinted) Unwrap() error { return e.error }

// Printed marks err as printed as JSON already by the command that
// returns it (a result that carries its own error), so that it is not
// printed a second time.
func Printed(err error) error { return jsonPrinted{err} }

// AlreadyPrinted reports whether err was printed as a JSON line already
// (by WithJSONErrors, or item by item).
func AlreadyPrinted(err error) bool {
	var p jsonPrinted
	return errors.As(err, &p) || errors.Is(err, ErrItemsFailed)
}

// Explain adds to an error the one thing a person can do about it, for the
// failures people meet first: a site that cannot be reached, wrong keys, a
// clock that is off, a bucket that is not there. The message stays one line.
func Explain(err error) error {
	var done explained
	if err == nil || errors.As(err, &done) {
		return err
	}
	var unreachable *adminclient.UnreachableError
	if errors.As(err, &unreachable) {
		return explained{err, "is the site running, and is the alias's URL right? 'twinlake alias list' shows it"}
	}
	code := S3Code(err)
	var ae *adminclient.Error
	if errors.As(err, &ae) {
		code = ae.Code
	}
	if hint, ok := hints[code]; ok {
		return explained{err, hint}
	}
	return err
}

// hints are what Explain adds, by S3 or admin error code.
var hints = map[string]string{
	"InvalidAccessKeyId":    "the alias's access key is not known to the site: check it with 'twinlake alias list', set it with 'twinlake alias set ALIAS URL ACCESS_KEY SECRET_KEY'",
	"SignatureDoesNotMatch": "the alias's secret key is wrong for its access key: set it again with 'twinlake alias set ALIAS URL ACCESS_KEY SECRET_KEY'",
	"RequestTimeTooSkewed":  "this machine's clock and the site's differ by more than 15 minutes: set the clock (NTP) and try again",
	"ExpiredToken":          "the session token has expired: get new temporary credentials",
	"NoSuchBucket":          "the bucket does not exist: 'twinlake ls ALIAS' lists the buckets",
	"AccessDenied":          "the alias's user lacks a policy allowing this: 'twinlake admin user info ALIAS USER' shows its policies",
}

// explained is an error with a hint; errors.As still finds the cause.
type explained struct {
	err  error
	hint string
}

func (e explained) Error() string {
	return strings.ReplaceAll(e.err.Error(), "\n", " ") + " (" + e.hint + ")"
}

func (e explained) Unwrap() error { return e.err }

// printItemErr reports one failed item of a command that goes on with the
// rest: a JSON line on stdout with --json, a line on stderr otherwise.
func PrintItemErr(cmd *cobra.Command, opts *Options, err error) {
	if opts.JSON {
		json.NewEncoder(cmd.OutOrStdout()).Encode(NewJSONError(err))
		return
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "twinlake:", err)
}

// withJSONErrors wraps a command's RunE so that, with --json, the error it
// returns is also printed as a JSON line on stdout (main still prints it on
// stderr and exits 1).
func WithJSONErrors(opts *Options, run func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := Explain(run(cmd, args))
		if err != nil && opts.JSON && !AlreadyPrinted(err) {
			json.NewEncoder(cmd.OutOrStdout()).Encode(NewJSONError(err))
			return jsonPrinted{err}
		}
		return err
	}
}

// errItemsFailed is returned by a command that went on past failed items
// (each already reported) so that it exits 1.
var ErrItemsFailed = errors.New("some operations failed (see above)")

// itemsFailed wraps errItemsFailed with a count.
func ItemsFailed(n int, what string) error {
	return fmt.Errorf("%w: %d %s failed", ErrItemsFailed, n, what)
}

// writeJSON encodes v as one line, ignoring the human form.
func WriteJSON(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}
