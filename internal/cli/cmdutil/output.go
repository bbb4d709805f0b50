package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"
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
	if errors.As(err, &resp) {
		body.Code, body.RequestID = resp.Code, resp.RequestID
	}
	return JSONError{Status: "error", Error: body}
}

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
		err := run(cmd, args)
		if err != nil && opts.JSON && !errors.Is(err, ErrItemsFailed) {
			json.NewEncoder(cmd.OutOrStdout()).Encode(NewJSONError(err))
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
