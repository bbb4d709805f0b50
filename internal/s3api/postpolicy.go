package s3api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/s3api/sigv4"
)

// Browser-based POST uploads (S3's POST Object): a multipart/form-data POST
// to the bucket whose fields carry the key, the object's metadata, a base64
// JSON policy bounding what may be uploaded, and a signature over that
// policy instead of over the request. The file part comes last and is
// streamed to the object layer; everything before it is held in memory,
// bounded by maxPostFormBytes and maxPostFields.

const (
	// maxPostFormBytes bounds the fields before the file (names and
	// values). S3 allows 20 KB; policies signed by tools run a few KB.
	maxPostFormBytes = 64 << 10
	// maxPostFields bounds how many fields precede the file.
	maxPostFields = 256
)

var (
	errPostMalformed  = apiErr("MalformedPOSTRequest", http.StatusBadRequest, "The body of your POST request is not well-formed multipart/form-data.")
	errPostNoFile     = apiErr("InvalidArgument", http.StatusBadRequest, "POST requires exactly one file upload per request.")
	errPostNoKey      = apiErr("InvalidArgument", http.StatusBadRequest, "Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields.")
	errPostPreData    = apiErr("MaxPostPreDataLengthExceeded", http.StatusBadRequest, "Your POST request fields preceding the upload file were too large.")
	errPostPolicyB64  = apiErr("InvalidPolicyDocument", http.StatusBadRequest, "Invalid Policy: Invalid Base64 Encoding.")
	errPostPolicyJSON = apiErr("InvalidPolicyDocument", http.StatusBadRequest, "Invalid Policy: Invalid JSON.")
	errPostExpired    = apiErr("AccessDenied", http.StatusForbidden, "Invalid according to Policy: Policy expired.")
	errPostTooSmall   = apiErr("EntityTooSmall", http.StatusBadRequest, "Your proposed upload is smaller than the minimum allowed size.")
	errPostTooLarge   = apiErr("EntityTooLarge", http.StatusBadRequest, "Your proposed upload exceeds the maximum allowed size.")
)

func errPolicyDoc(msg string) *APIError {
	return apiErr("InvalidPolicyDocument", http.StatusBadRequest, "Invalid Policy: "+msg)
}

func errPolicyFailed(cond string) *APIError {
	return apiErr("AccessDenied", http.StatusForbidden, "Invalid according to Policy: Policy Condition failed: "+cond)
}

// postExempt are the fields a policy need not name (S3 exempts the
// signature, the policy itself and the file; the SigV2 access key is part
// of the signature).
var postExempt = map[string]bool{
	"policy": true, "x-amz-signature": true, "signature": true, "awsaccesskeyid": true, "file": true,
}

// isPostObject reports whether req is a browser POST upload: a POST with a
// form body to a bucket, naming no sub-resource.
func (s *Server) isPostObject(req *request) bool {
	if req.r.Method != http.MethodPost || req.bucket == "" || req.key != "" || namesSubresource(req) {
		return false
	}
	mt, _, err := mime.ParseMediaType(req.r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// postForm is the fields that preceded the file, by lower-case name.
type postForm struct {
	names  []string // lower-case, in order
	values map[string]string
}

func (f *postForm) get(name string) string { return f.values[name] }

// readPostForm reads fields up to the file part, which it returns open.
func readPostForm(r *http.Request) (*postForm, *multipart.Part, error) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, nil, errPostMalformed
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	f := &postForm{values: map[string]string{}}
	budget := int64(maxPostFormBytes)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, nil, errPostNoFile
		}
		if err != nil {
			if toAPIError(err) != errInternal {
				return nil, nil, err // a timeout or a truncated body
			}
			return nil, nil, errPostMalformed
		}
		name := strings.ToLower(p.FormName())
		if name == "" {
			return nil, nil, errPostMalformed
		}
		if name == "file" {
			return f, p, nil
		}
		if len(f.names) >= maxPostFields {
			return nil, nil, errPostPreData
		}
		budget -= int64(len(name))
		v, err := io.ReadAll(io.LimitReader(p, budget+1))
		if err != nil {
			if toAPIError(err) != errInternal {
				return nil, nil, err
			}
			return nil, nil, errPostMalformed
		}
		if budget -= int64(len(v)); budget < 0 {
			return nil, nil, errPostPreData
		}
		if _, dup := f.values[name]; dup {
			return nil, nil, apiErr("InvalidArgument", http.StatusBadRequest, fmt.Sprintf("The form field %s appears more than once.", name))
		}
		f.names = append(f.names, name)
		f.values[name] = string(v)
	}
}

// postCondition is one condition of a POST policy: eq or starts-with on a
// field (lower-case, without '$'), or content-length-range.
type postCondition struct {
	op       string // "eq", "starts-with", "content-length-range"
	field    string
	value    string
	min, max int64
	text     string // as in the policy, for error messages
}

// postPolicy is a decoded POST policy document.
type postPolicy struct {
	expiration time.Time
	conditions []postCondition
	lengthSet  bool
	min, max   int64
}

// parsePostPolicy decodes a base64 policy: a JSON object with an
// "expiration" (ISO 8601) and a "conditions" array (both spelled so).
func parsePostPolicy(b64 string) (*postPolicy, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errPostPolicyB64
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, errPostPolicyJSON
	}
	var p postPolicy
	var exp string
	if doc["expiration"] == nil || json.Unmarshal(doc["expiration"], &exp) != nil {
		return nil, errPolicyDoc("Policy missing expiration.")
	}
	if p.expiration, err = time.Parse(time.RFC3339Nano, exp); err != nil {
		return nil, errPolicyDoc("Invalid 'expiration' value: '" + exp + "'")
	}
	var conds []json.RawMessage
	if doc["conditions"] == nil || json.Unmarshal(doc["conditions"], &conds) != nil {
		return nil, errPolicyDoc("Policy missing conditions.")
	}
	for _, c := range conds {
		pc, err := parsePostCondition(c)
		if err != nil {
			return nil, err
		}
		if pc.op == "content-length-range" {
			p.lengthSet, p.min, p.max = true, pc.min, pc.max
			continue
		}
		p.conditions = append(p.conditions, pc)
	}
	return &p, nil
}

func parsePostCondition(c json.RawMessage) (postCondition, error) {
	text := string(bytes.TrimSpace(c))
	bad := errPolicyDoc("Invalid Condition: " + text)
	if len(text) > 0 && text[0] == '{' {
		var m map[string]string
		if json.Unmarshal(c, &m) != nil || len(m) != 1 {
			return postCondition{}, bad
		}
		for k, v := range m {
			return postCondition{op: "eq", field: strings.ToLower(strings.TrimPrefix(k, "$")), value: v, text: text}, nil
		}
	}
	var arr []json.RawMessage
	if json.Unmarshal(c, &arr) != nil || len(arr) == 0 {
		return postCondition{}, bad
	}
	var op string
	if json.Unmarshal(arr[0], &op) != nil {
		return postCondition{}, bad
	}
	switch op = strings.ToLower(op); op {
	case "eq", "starts-with":
		var field, value string
		if len(arr) != 3 || json.Unmarshal(arr[1], &field) != nil || json.Unmarshal(arr[2], &value) != nil || !strings.HasPrefix(field, "$") {
			return postCondition{}, bad
		}
		return postCondition{op: op, field: strings.ToLower(field[1:]), value: value, text: text}, nil
	case "content-length-range":
		if len(arr) != 3 {
			return postCondition{}, bad
		}
		lo, err1 := policyInt(arr[1])
		hi, err2 := policyInt(arr[2])
		if err1 != nil || err2 != nil || lo < 0 || hi < lo {
			return postCondition{}, bad
		}
		return postCondition{op: op, min: lo, max: hi, text: text}, nil
	}
	return postCondition{}, bad
}

// policyInt reads a content-length-range bound: a JSON integer, or a
// string holding one (both are seen from clients).
func policyInt(raw json.RawMessage) (int64, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strconv.ParseInt(s, 10, 64)
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	return n.Int64()
}

// check holds the form (with bucket and the final key) to the policy: every
// condition holds and every field but the exempt ones is named by one.
func (p *postPolicy) check(f *postForm, bucket, key string, now time.Time) error {
	if !now.Before(p.expiration) {
		return errPostExpired
	}
	named := map[string]bool{}
	for _, c := range p.conditions {
		named[c.field] = true
		var v string
		switch c.field {
		case "bucket":
			v = bucket
		case "key":
			v = key
		default:
			v = f.get(c.field)
		}
		ok := c.op == "eq" && v == c.value || c.op == "starts-with" && strings.HasPrefix(v, c.value)
		if !ok {
			return errPolicyFailed(c.text)
		}
	}
	for _, name := range f.names {
		// A checksum field only narrows what is accepted (S3 takes it
		// without a condition, as awscli sends it).
		if postExempt[name] || strings.HasPrefix(name, "x-ignore-") || strings.HasPrefix(name, "x-amz-checksum-") || named[name] {
			continue
		}
		return apiErr("AccessDenied", http.StatusForbidden, "Invalid according to Policy: Extra input fields: "+name)
	}
	return nil
}

// postControl are fields that steer the upload rather than describe the
// object; they are not copied into the object's headers.
var postControl = map[string]bool{
	"key": true, "bucket": true, "policy": true, "tagging": true, "file": true,
	"success_action_status": true, "success_action_redirect": true, "redirect": true,
	"x-amz-algorithm": true, "x-amz-credential": true, "x-amz-date": true, "x-amz-signature": true,
	"x-amz-security-token": true, "awsaccesskeyid": true, "signature": true,
}

// postResponse is the document a 201 answer carries.
type postResponse struct {
	XMLName  xml.Name `xml:"PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// postObject serves a browser POST upload.
func (s *Server) postObject(req *request) error {
	req.api = "PostObject"
	s.addCORSHeaders(req)
	form, file, err := readPostForm(req.r)
	if err != nil {
		return err
	}
	res, err := s.cfg.Verifier.VerifyPost(sigv4.PostForm{
		Policy: form.get("policy"), Algorithm: form.get("x-amz-algorithm"), Credential: form.get("x-amz-credential"),
		Date: form.get("x-amz-date"), Signature: form.get("x-amz-signature"), AccessKeyID: form.get("awsaccesskeyid"),
		SignatureV2: form.get("signature"), SecurityToken: form.get("x-amz-security-token"),
	})
	if errors.Is(err, sigv4.ErrMalformedPOST) {
		return apiErr("InvalidArgument", http.StatusBadRequest, strings.TrimPrefix(err.Error(), sigv4.ErrMalformedPOST.Error()+": "))
	}
	if err != nil {
		return err
	}
	if res.Anonymous && s.cfg.Authorizer == nil || s.cfg.Denied != nil && s.cfg.Denied(res.AccessKey) {
		return errAccessDenied
	}
	req.auth = res
	key := form.get("key")
	if _, ok := form.values["key"]; !ok {
		return errPostNoKey
	}
	req.key = strings.ReplaceAll(key, "${filename}", file.FileName())
	if req.key == "" {
		return errPostNoKey
	}
	var pol *postPolicy
	if b64 := form.get("policy"); b64 != "" {
		if pol, err = parsePostPolicy(b64); err != nil {
			return err
		}
		if err := pol.check(form, req.bucket, req.key, time.Now()); err != nil {
			return err
		}
	}
	// The object's headers, its canned ACL (field acl, x-amz-acl on a PUT)
	// and the protections asked for come from the fields; PUT's own reader
	// interprets them.
	hdr := http.Header{}
	for _, name := range form.names {
		switch {
		case name == "acl":
			hdr.Set("X-Amz-Acl", form.values[name])
		case !postControl[name] && !strings.HasPrefix(name, "x-ignore-"):
			hdr.Set(textproto.CanonicalMIMEHeaderKey(name), form.values[name])
		}
	}
	if err := checkProtections(hdr, "PutObject"); err != nil {
		return err
	}
	fr := *req.r
	fr.Header = hdr
	freq := *req
	freq.r = &fr
	vals := conditionValues(&freq, "PutObject")
	if !s.allowed(req, "s3:PutObject", req.bucket, req.key, vals) || !s.aclWriteAllowed(&freq, "PutObject") {
		return errAccessDenied
	}
	if s.cfg.WriteGuard != nil {
		if err := s.cfg.WriteGuard(req.ctx, req.bucket); err != nil {
			return apiErr("AccessDenied", http.StatusForbidden, err.Error())
		}
	}
	opts, err := s.putOptions(&freq)
	if err != nil {
		return err
	}
	declared, err := checksum.FromHeaders(hdr)
	if err != nil {
		return err
	}
	if declared.Trailer {
		return apiErr("InvalidRequest", http.StatusBadRequest, "A POST upload cannot declare a trailing checksum.")
	}
	if t := form.get("tagging"); t != "" {
		if opts.Tags, err = readTagging(strings.NewReader(t), maxObjectTags); err != nil {
			return err
		}
	}
	lo, hi := int64(0), int64(maxPutSize)
	if pol != nil && pol.lengthSet {
		lo, hi = pol.min, min(pol.max, maxPutSize)
	}
	body := &postBody{r: file, max: hi}
	opts.Size = -1
	opts.Checksum = declared.Algorithm
	opts.Verify = func(md5Hex string, sums map[checksum.Algorithm]string) error {
		if body.n < lo {
			return errPostTooSmall
		}
		return declared.Verify(md5Hex, sums)
	}
	v, err := s.obj.PutObject(req.ctx, req.bucket, req.key, body, opts)
	if err != nil {
		return err
	}
	etag := `"` + v.ETag + `"`
	h := req.w.Header()
	h.Set("ETag", etag)
	s.setWriteVersionHeader(req, v)
	if v.SSE != "" {
		h.Set("x-amz-server-side-encryption", v.SSE)
	}
	setChecksumHeaders(h, v.Checksums)
	loc := s.objectURL(req)
	h.Set("Location", loc)
	if redir := form.get("success_action_redirect"); redir != "" {
		if u, err := url.Parse(redir); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			// bucket, key, etag in this order, after any query of its own.
			q := "bucket=" + url.QueryEscape(req.bucket) + "&key=" + url.QueryEscape(req.key) + "&etag=" + url.QueryEscape(etag)
			if u.RawQuery != "" {
				q = u.RawQuery + "&" + q
			}
			u.RawQuery = q
			h.Set("Location", u.String())
			req.w.WriteHeader(http.StatusSeeOther)
			return nil
		}
	}
	switch form.get("success_action_status") {
	case "200":
		req.w.WriteHeader(http.StatusOK)
	case "201":
		writeXML(req.w, http.StatusCreated, postResponse{Location: loc, Bucket: req.bucket, Key: req.key, ETag: etag})
	default:
		req.w.WriteHeader(http.StatusNoContent)
	}
	return nil
}

// objectURL is the URL of the object req names, in the style the request
// addressed the bucket.
func (s *Server) objectURL(req *request) string {
	scheme := "http"
	if req.r.TLS != nil {
		scheme = "https"
	}
	path := "/" + req.bucket + "/" + sigv4EscapePath(req.key)
	if p := strings.TrimPrefix(req.r.URL.Path, "/"); p == "" && s.cfg.Domain != "" {
		path = "/" + sigv4EscapePath(req.key) // virtual-host style
	}
	return scheme + "://" + req.r.Host + path
}

// sigv4EscapePath escapes a key for a URL path, keeping '/'.
func sigv4EscapePath(key string) string {
	return strings.ReplaceAll(url.PathEscape(key), "%2F", "/")
}

// postBody is the file part, held to the policy's upper bound.
type postBody struct {
	r   io.Reader
	n   int64
	max int64
}

func (b *postBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return n, errPostTooLarge
	}
	return n, err
}
