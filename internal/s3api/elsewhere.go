package s3api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
)

// Bodies written elsewhere. On a multi-node site the node that received a
// PUT can write its body to the drives itself, so that the bytes do not
// pass through the leader (internal/app/node_write.go). The leader serves
// the request as any other, and when it comes to the data of a PUT or an
// upload's part (objects.ElsewhereBody), it has the node read the body
// with the checks this server would make (Elsewhere.Check) and write it.

// An OfferedBody is a request's body that the process which received it
// offers to write itself.
type OfferedBody interface {
	// CanStore is objects.ElsewhereBody's.
	CanStore(blobs int, encrypted bool) bool
	// StoreAs reads the body, checking it as w says, writes it to the
	// new blobs as objects.ElsewhereBody says, and reports what it
	// wrote and the trailing headers it read.
	StoreAs(blobs []objects.ElsewhereBlob, w Elsewhere, algs []checksum.Algorithm) ([]objects.StoredElsewhere, http.Header, error)
}

// Elsewhere is how a body written elsewhere is to be read: the checks of
// its payload, and how long it may take.
type Elsewhere struct {
	Check sigv4.PayloadCheck `json:"check"`
	// Idle is the longest the body may stop arriving, End when the
	// whole of it must have arrived.
	Idle time.Duration `json:"idle"`
	End  time.Time     `json:"end"`
}

type offeredKey struct{}

// WithOfferedBody returns ctx carrying body, the request's body as
// offered by the process that received it.
func WithOfferedBody(ctx context.Context, body OfferedBody) context.Context {
	return context.WithValue(ctx, offeredKey{}, body)
}

// offeredPayload is the payload of a request whose body was offered: read,
// the body as it comes; stored, written where it is.
type offeredPayload struct {
	io.Reader // the body checked as it comes, for a declined offer
	body      OfferedBody
	how       Elsewhere
	auth      *sigv4.Result
	info      *RequestInfo // nil: none kept
}

// offered returns the payload of req, whose body read here is body, as
// one written elsewhere if its body was offered and can be.
func (s *Server) offered(req *request, body io.Reader) io.Reader {
	idle, total := s.bodyTimeouts()
	return OfferedPayload(req.r.Context(), body, req.auth, idle, req.start.Add(total))
}

// OfferedPayload returns the payload of a request whose context is ctx,
// authenticated as res and whose body read here is body: when the process
// that received it offered to write its body (WithOfferedBody) and it can
// be read there, one that is an objects.ElsewhereBody, to be read there
// under the deadlines idle and end; else body.
func OfferedPayload(ctx context.Context, body io.Reader, res *sigv4.Result, idle time.Duration, end time.Time) io.Reader {
	ob, _ := ctx.Value(offeredKey{}).(OfferedBody)
	if ob == nil {
		return body
	}
	check, ok := res.PayloadCheck()
	if !ok {
		return body
	}
	return &offeredPayload{Reader: body, body: ob, auth: res, info: requestInfo(ctx),
		how: Elsewhere{Check: check, Idle: idle, End: end}}
}

func (p *offeredPayload) CanStore(blobs int, encrypted bool) bool {
	return p.body.CanStore(blobs, encrypted)
}

func (p *offeredPayload) StoreAs(blobs []objects.ElsewhereBlob, algs []checksum.Algorithm) ([]objects.StoredElsewhere, error) {
	st, trailers, err := p.body.StoreAs(blobs, p.how, algs)
	if p.info != nil {
		p.info.BodyElsewhere = true
	}
	if err != nil {
		return st, err
	}
	p.auth.SetTrailers(trailers)
	return st, nil
}

// ClientBody is body, the body of the request w answers, read under the
// server's deadlines (idle, total, from start) and ending early as
// objects.ErrIncompleteBody: as a request's body is read here.
func ClientBody(w http.ResponseWriter, body io.ReadCloser, idle, total time.Duration, start time.Time) io.ReadCloser {
	return truncatedBody{newDeadlineBody(w, body, idle, total, start)}
}

// bodyErrors are the ends of reading a body that have answers of their
// own.
var bodyErrors = []error{
	sigv4.ErrContentSHA256Mismatch, sigv4.ErrMalformedChunk, sigv4.ErrIncompleteBody,
	sigv4.ErrDecodedLengthMismatch, sigv4.ErrChunkSignatureMismatch, sigv4.ErrMalformedTrailer,
	objects.ErrIncompleteBody, errRequestTimeout,
}

// BodyErrorName names err, an end of reading a body elsewhere, for
// BodyError: "" if it has no answer of its own.
func BodyErrorName(err error) string {
	for _, e := range bodyErrors {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return ""
}

// BodyError is the error BodyErrorName named name, or nil.
func BodyError(name string) error {
	for _, e := range bodyErrors {
		if name != "" && e.Error() == name {
			return e
		}
	}
	return nil
}
