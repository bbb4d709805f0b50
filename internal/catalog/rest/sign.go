package rest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/twinlake/twinlake/internal/catalog"
)

// Remote signing (the spec's signRequest): a client that sends
// X-Iceberg-Access-Delegation: remote-signing on loadTable gets
// s3.remote-signing-enabled and the table's sign endpoint instead of
// credentials, and sends each S3 request it is about to make to
//
//	POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/sign
//
// to have it signed. The server signs only requests within the table's
// location (its own prefixes; reads also in the directories its manifest
// lists lie in), read requests for callers who may load the table and
// writes only for callers who may commit it, and signs them with a
// temporary credential scoped the same way (vending.go), so the S3
// endpoint enforces the same limits again. Everything else is 403
// ForbiddenException.

// signRequest is the spec's RemoteSignRequest.
type signRequest struct {
	Region     string              `json:"region"`
	URI        string              `json:"uri"`
	Method     string              `json:"method"`
	Headers    map[string][]string `json:"headers"`
	Properties map[string]string   `json:"properties,omitempty"`
	Body       *string             `json:"body,omitempty"`
	Provider   string              `json:"provider,omitempty"`
}

// signResult is the spec's RemoteSignResult.
type signResult struct {
	URI     string              `json:"uri"`
	Headers map[string][]string `json:"headers"`
}

// signedHeaderSkip are the request headers the signer leaves out: they
// change on the way (hop by hop) or are the signature itself.
var signedHeaderSkip = map[string]bool{"authorization": true, "user-agent": true, "x-amzn-trace-id": true,
	"expect": true, "connection": true, "transfer-encoding": true, "amz-sdk-invocation-id": true, "amz-sdk-request": true,
	"host": true, "x-amz-date": true, "x-amz-security-token": true}

// signTarget is the S3 request to sign, as the table sees it.
type signTarget struct {
	bucket, key string     // key "" for a bucket-level request
	query       url.Values // the request's query
	write       bool       // the method changes data
}

func (s *Server) signS3Request(w http.ResponseWriter, r *http.Request, c *call) error {
	var req signRequest
	if err := s.readJSON(w, r, &req); err != nil {
		return err
	}
	if req.Provider != "" && req.Provider != "s3" {
		return fmt.Errorf("%w: provider %q: only s3 requests are signed", errBadRequest, req.Provider)
	}
	req.Method = strings.ToUpper(req.Method)
	u, err := url.Parse(req.URI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: uri %q is not an http(s) URL", errBadRequest, req.URI)
	}
	t, err := s.cat.LoadTable(r.Context(), c.params["prefix"], tableIdent(c, "table"))
	if err != nil {
		return err
	}
	own, foreign := vendPrefixes(t)
	if len(own) == 0 {
		return fmt.Errorf("%w: table location %q cannot be signed for", errBadRequest, t.Location)
	}
	tgt, err := parseSignTarget(u, req.Method, own)
	if err != nil {
		return err
	}
	c.msg = req.Method + " s3://" + tgt.bucket + "/" + tgt.key
	if err := checkSignTarget(tgt, own, foreign, req); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrForbidden, req.Method, req.URI, err)
	}
	if tgt.write && !s.mayWriteTable(r, c) {
		return fmt.Errorf("%w: %s may read, not write, table %s", ErrForbidden, c.key, t.Ident)
	}
	cred, err := s.signingCredential(c.key, t, own, foreign, tgt.write)
	if err != nil {
		return err
	}
	headers, err := signWith(r, req, u, cred, s.cfg.Region)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-cache")
	writeJSON(w, http.StatusOK, signResult{URI: req.URI, Headers: headers})
	return nil
}

// parseSignTarget finds the bucket and key of a path-style
// (host/bucket/key) or virtual-hosted (bucket.host/key) S3 URL; the
// bucket must be the table's.
func parseSignTarget(u *url.URL, method string, own []s3Prefix) (signTarget, error) {
	bucket := own[0].bucket
	tgt := signTarget{bucket: bucket, query: u.Query()}
	switch method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPut, http.MethodPost, http.MethodDelete:
		tgt.write = true
	default:
		return tgt, fmt.Errorf("%w: method %q is not signed", ErrForbidden, method)
	}
	path := u.Path
	switch {
	case path == "/"+bucket || strings.HasPrefix(path, "/"+bucket+"/"):
		tgt.key = strings.TrimPrefix(strings.TrimPrefix(path, "/"+bucket), "/")
	case strings.HasPrefix(u.Hostname(), bucket+"."):
		tgt.key = strings.TrimPrefix(path, "/")
	default:
		return tgt, fmt.Errorf("%w: %s is not in the table's bucket %s", ErrForbidden, u.Redacted(), bucket)
	}
	return tgt, nil
}

// checkSignTarget allows object requests under the table's prefixes
// (reads also under the foreign ones), listings of a prefix there, and a
// multi-object delete whose keys (in the body, bound to the signature by
// its hash) all lie there.
func checkSignTarget(tgt signTarget, own, foreign []s3Prefix, req signRequest) error {
	readable := append(append([]s3Prefix{}, own...), foreign...)
	within := func(key string, ps []s3Prefix) bool {
		for _, p := range ps {
			if p.bucket == tgt.bucket && strings.HasPrefix(key, p.key+"/") {
				return true
			}
		}
		return false
	}
	if tgt.key != "" {
		if tgt.write && !within(tgt.key, own) {
			return fmt.Errorf("%s is outside the table's location", tgt.key)
		}
		if !tgt.write && !within(tgt.key, readable) {
			return fmt.Errorf("%s is outside the table's location", tgt.key)
		}
		return nil
	}
	switch {
	case !tgt.write && (tgt.query.Has("list-type") || tgt.query.Has("prefix")) && !tgt.query.Has("versions") && !tgt.query.Has("uploads"):
		prefix := tgt.query.Get("prefix")
		for _, p := range readable {
			if p.bucket == tgt.bucket && (prefix == p.key || strings.HasPrefix(prefix, p.key+"/")) {
				return nil
			}
		}
		return fmt.Errorf("a listing of prefix %q is outside the table's location", prefix)
	case tgt.write && req.Method == http.MethodPost && tgt.query.Has("delete"):
		if req.Body == nil {
			return fmt.Errorf("a multi-object delete is signed only with its body")
		}
		sum := sha256.Sum256([]byte(*req.Body))
		if got := headerValue(req.Headers, "X-Amz-Content-Sha256"); got != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("a multi-object delete is signed only with x-amz-content-sha256 of its body")
		}
		var del struct {
			Objects []struct {
				Key string `xml:"Key"`
			} `xml:"Object"`
		}
		if err := xml.Unmarshal([]byte(*req.Body), &del); err != nil || len(del.Objects) == 0 {
			return fmt.Errorf("the multi-object delete body does not parse")
		}
		for _, o := range del.Objects {
			if !within(o.Key, own) {
				return fmt.Errorf("%s is outside the table's location", o.Key)
			}
		}
		return nil
	}
	return fmt.Errorf("bucket-level requests other than a listing of the table's prefix are not signed")
}

func headerValue(h map[string][]string, name string) string {
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// signWith signs the request with cred (SigV4, service s3) and returns
// every header the client must send: its own plus the signature's.
func signWith(r *http.Request, req signRequest, u *url.URL, cred VendedCredential, defaultRegion string) (map[string][]string, error) {
	var body []byte
	if req.Body != nil {
		body = []byte(*req.Body)
	}
	hr, err := http.NewRequestWithContext(r.Context(), req.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	hr.Header = http.Header{}
	unsigned := map[string][]string{}
	for k, vs := range req.Headers {
		switch lk := strings.ToLower(k); {
		case lk == "authorization" || lk == "x-amz-date" || lk == "x-amz-security-token" || lk == "host":
			// replaced by the signature's
		case signedHeaderSkip[lk]:
			unsigned[k] = vs // passed back, not signed
		default:
			for _, v := range vs {
				hr.Header.Add(k, v)
			}
		}
	}
	hash := hr.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		hash = "UNSIGNED-PAYLOAD"
		if req.Body != nil {
			sum := sha256.Sum256(body)
			hash = hex.EncodeToString(sum[:])
		}
		hr.Header.Set("X-Amz-Content-Sha256", hash)
	}
	region := req.Region
	if region == "" {
		region = defaultRegion
	}
	creds := aws.Credentials{AccessKeyID: cred.AccessKey, SecretAccessKey: cred.SecretKey, SessionToken: cred.SessionToken}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, hr, hash, "s3", region, time.Now().UTC()); err != nil {
		return nil, err
	}
	out := unsigned
	for k, vs := range hr.Header {
		out[k] = vs
	}
	return out, nil
}

// signingCredential returns a temporary credential of the caller scoped
// to the table (read-only, or read-write), reusing one while it has more
// than signCredMinLife left, so that signing does not issue a session per
// request.
func (s *Server) signingCredential(caller string, t *catalog.Table, own, foreign []s3Prefix, write bool) (VendedCredential, error) {
	v, ok := s.cfg.Auth.(CredentialVendor)
	if !ok {
		return VendedCredential{}, fmt.Errorf("%w: remote signing is not available", errUnsupported)
	}
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%t", caller, t.UUID, t.MetadataLocation, write)
	now := time.Now()
	if cred, ok := s.signCreds.get(key, now); ok {
		return cred, nil
	}
	scope, err := vendScope(own, foreign, write)
	if err != nil {
		return VendedCredential{}, err
	}
	cred, err := v.VendCredentials(caller, VendDuration, scope)
	if err != nil {
		return VendedCredential{}, fmt.Errorf("%w: sign: %v", ErrForbidden, err)
	}
	s.signCreds.put(key, cred, now)
	return cred, nil
}

// signCredMinLife is how long a cached signing credential must still last
// to be reused; signCredMax bounds the cache.
const (
	signCredMinLife = 15 * time.Minute
	signCredMax     = 1024
)

// signCredCache holds signing credentials by caller, table version and
// mode. A credential's rights are read from its caller on every request
// (STS), so a cached one never outlives a revocation.
type signCredCache struct {
	mu sync.Mutex
	m  map[string]VendedCredential
}

func (c *signCredCache) get(key string, now time.Time) (VendedCredential, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cred, ok := c.m[key]
	return cred, ok && cred.Expiration.Sub(now) > signCredMinLife
}

func (c *signCredCache) put(key string, cred VendedCredential, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]VendedCredential{}
	}
	if len(c.m) >= signCredMax {
		for k, e := range c.m {
			if e.Expiration.Sub(now) <= signCredMinLife {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < signCredMax {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[key] = cred
}
