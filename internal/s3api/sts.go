package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
)

// SessionIssuer issues STS temporary credentials. internal/iam implements
// it (through internal/app).
type SessionIssuer interface {
	// AssumeRole issues a credential for parent lasting d, with parent's
	// rights intersected with inline (a parsed policy document, or nil).
	// An error means parent may not assume a role; it is answered
	// AccessDenied.
	AssumeRole(parent string, d time.Duration, inline []byte) (TemporaryCredential, error)
}

// TemporaryCredential is what AssumeRole returns to the client.
type TemporaryCredential struct {
	AccessKey, SecretKey, SessionToken string
	Expiration                         time.Time
}

// STS limits, AWS's: the duration bounds and default, and the largest
// form body read (AWS caps an inline policy at 2,048 characters).
const (
	stsMinDuration     = 900
	stsMaxDuration     = 43200
	stsDefaultDuration = 3600
	stsMaxBody         = 64 << 10
	stsNamespace       = "https://sts.amazonaws.com/doc/2011-06-15/"
)

// stsError is an STS protocol error (the query protocol's ErrorResponse).
type stsError struct {
	Code    string
	Message string
	Status  int
}

func (e *stsError) Error() string { return e.Code + ": " + e.Message }

func stsErr(status int, code, format string, args ...any) *stsError {
	return &stsError{Code: code, Message: fmt.Sprintf(format, args...), Status: status}
}

type stsErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Type      string   `xml:"Error>Type"`
	Code      string   `xml:"Error>Code"`
	Message   string   `xml:"Error>Message"`
	RequestID string   `xml:"RequestId"`
}

type assumeRoleResponse struct {
	XMLName      xml.Name `xml:"AssumeRoleResponse"`
	Xmlns        string   `xml:"xmlns,attr"`
	AccessKeyID  string   `xml:"AssumeRoleResult>Credentials>AccessKeyId"`
	SecretKey    string   `xml:"AssumeRoleResult>Credentials>SecretAccessKey"`
	SessionToken string   `xml:"AssumeRoleResult>Credentials>SessionToken"`
	Expiration   string   `xml:"AssumeRoleResult>Credentials>Expiration"`
	RequestID    string   `xml:"ResponseMetadata>RequestId"`
}

// isSTS reports whether a request is for STS: a POST to the service root,
// which S3 does not use.
func (s *Server) isSTS(req *request) bool {
	return s.cfg.STS != nil && req.r.Method == http.MethodPost && req.bucket == ""
}

// serveSTS answers an STS call, writing its own errors in STS's format.
func (s *Server) serveSTS(req *request) {
	req.api = "AssumeRole"
	resp, err := s.assumeRole(req)
	if err != nil {
		var se *stsError
		if !errors.As(err, &se) {
			ae := toAPIError(err)
			se = &stsError{Code: ae.Code, Message: ae.Message, Status: ae.Status}
		}
		typ := "Sender"
		if se.Status >= 500 {
			typ = "Receiver"
		}
		writeXML(req.w, se.Status, stsErrorResponse{Xmlns: stsNamespace, Type: typ, Code: se.Code, Message: se.Message, RequestID: req.id})
		return
	}
	writeXML(req.w, http.StatusOK, resp)
}

// assumeRole authenticates, parses and answers AssumeRole. AWS SDKs sign
// STS calls for service sts; a request signed for s3 is accepted too.
func (s *Server) assumeRole(req *request) (*assumeRoleResponse, error) {
	res, err := s.cfg.Verifier.Verify(req.r, "sts")
	if errors.Is(err, sigv4.ErrAuthorizationHeaderMalformed) || errors.Is(err, sigv4.ErrAuthorizationQueryParametersError) {
		res, err = s.cfg.Verifier.Verify(req.r, "s3")
	}
	if err != nil {
		return nil, err
	}
	if res.Anonymous {
		return nil, stsErr(http.StatusForbidden, "AccessDenied", "STS requests must be signed")
	}
	req.auth = res
	form, err := stsForm(req, res)
	if err != nil {
		return nil, err
	}
	if a := form.Get("Action"); a != "AssumeRole" {
		return nil, stsErr(http.StatusBadRequest, "InvalidAction", "could not find operation %q", a)
	}
	if v := form.Get("Version"); v != "2011-06-15" {
		return nil, stsErr(http.StatusBadRequest, "InvalidParameterValue", "unsupported Version %q (want 2011-06-15)", v)
	}
	secs := stsDefaultDuration
	if v := form.Get("DurationSeconds"); v != "" {
		if secs, err = strconv.Atoi(v); err != nil || secs < stsMinDuration || secs > stsMaxDuration {
			return nil, stsErr(http.StatusBadRequest, "ValidationError",
				"DurationSeconds must be an integer from %d to %d", stsMinDuration, stsMaxDuration)
		}
	}
	var inline []byte
	if v := form.Get("Policy"); v != "" {
		p, err := policy.Parse([]byte(v))
		if err != nil {
			return nil, stsErr(http.StatusBadRequest, "MalformedPolicyDocument", "%v", err)
		}
		inline = p.JSON()
	}
	c, err := s.cfg.STS.AssumeRole(res.AccessKey, time.Duration(secs)*time.Second, inline)
	if err != nil {
		return nil, stsErr(http.StatusForbidden, "AccessDenied", "%v", err)
	}
	return &assumeRoleResponse{Xmlns: stsNamespace, AccessKeyID: c.AccessKey, SecretKey: c.SecretKey,
		SessionToken: c.SessionToken, Expiration: c.Expiration.UTC().Format(time.RFC3339), RequestID: req.id}, nil
}

// stsForm reads the verified form body; parameters in the query string
// count too, as AWS's query protocol allows.
func stsForm(req *request, res *sigv4.Result) (url.Values, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body(req.r), stsMaxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > stsMaxBody {
		return nil, stsErr(http.StatusBadRequest, "InvalidParameterValue", "request body exceeds %d bytes", stsMaxBody)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, stsErr(http.StatusBadRequest, "MalformedQueryString", "form body does not parse: %v", err)
	}
	for k, v := range req.query {
		if !form.Has(k) {
			form[k] = v
		}
	}
	return form, nil
}
