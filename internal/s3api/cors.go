package s3api

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// CORS, as S3 serves it: a bucket's CORS configuration (PutBucketCors,
// GetBucketCors, DeleteBucketCors on ?cors), the unauthenticated preflight
// (OPTIONS on a bucket or object) and the CORS headers on actual requests
// that carry an Origin. The configuration is stored in the bucket record as
// canonical XML (objects.Bucket.CORS) and replicates as a bucket setting.

// Limits of a CORS configuration, as AWS sets them.
const (
	maxCORSRules  = 100
	maxCORSSize   = 64 << 10
	maxCORSRuleID = 255
)

// corsMethods are the methods a CORS rule may allow.
var corsMethods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodHead}

var (
	errNoSuchCORS = apiErr("NoSuchCORSConfiguration", http.StatusNotFound, "The CORS configuration does not exist")
	errCORSDenied = apiErr("AccessForbidden", http.StatusForbidden,
		"CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.")
	errCORSNoOrigin = apiErr("BadRequest", http.StatusBadRequest, "Insufficient information. Origin request header needed.")
)

// corsVary is the Vary value of a response whose CORS headers depend on
// the request's.
const corsVary = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"

type corsConfiguration struct {
	XMLName xml.Name   `xml:"CORSConfiguration"`
	NS      string     `xml:"xmlns,attr,omitempty"`
	Rules   []corsRule `xml:"CORSRule"`
}

type corsRule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader,omitempty"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader,omitempty"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds,omitempty"`
}

// parseCORS decodes and validates a PutBucketCors body, returning the
// configuration with its values trimmed.
func parseCORS(data []byte) (*corsConfiguration, error) {
	var cfg corsConfiguration
	if err := xml.Unmarshal(data, &cfg); err != nil {
		return nil, errMalformedXML
	}
	if len(cfg.Rules) == 0 {
		return nil, errMalformedXML
	}
	if len(cfg.Rules) > maxCORSRules {
		return nil, apiErr("MalformedXML", http.StatusBadRequest,
			fmt.Sprintf("The number of CORS rules should not exceed allowed limit of %d rules.", maxCORSRules))
	}
	for i := range cfg.Rules {
		if err := cfg.Rules[i].validate(); err != nil {
			return nil, err
		}
	}
	cfg.XMLName = xml.Name{}
	cfg.NS = s3NS
	return &cfg, nil
}

func trimAll(vs []string) []string {
	for i, v := range vs {
		vs[i] = strings.TrimSpace(v)
	}
	return vs
}

func (r *corsRule) validate() error {
	r.ID = strings.TrimSpace(r.ID)
	trimAll(r.AllowedOrigins)
	trimAll(r.AllowedMethods)
	trimAll(r.AllowedHeaders)
	trimAll(r.ExposeHeaders)
	if len(r.AllowedOrigins) == 0 || len(r.AllowedMethods) == 0 {
		return errMalformedXML
	}
	if len(r.ID) > maxCORSRuleID {
		return apiErr("InvalidRequest", http.StatusBadRequest,
			fmt.Sprintf("ID length should not exceed allowed limit of %d", maxCORSRuleID))
	}
	for _, m := range r.AllowedMethods {
		if !slices.Contains(corsMethods, m) {
			return apiErr("InvalidRequest", http.StatusBadRequest,
				"Found unsupported HTTP method in CORS config. Unsupported method is "+m)
		}
	}
	for _, o := range r.AllowedOrigins {
		if o == "" {
			return errMalformedXML
		}
		if strings.Count(o, "*") > 1 {
			return apiErr("InvalidRequest", http.StatusBadRequest,
				fmt.Sprintf("AllowedOrigin %q can not have more than one wildcard.", o))
		}
	}
	for _, h := range r.AllowedHeaders {
		if strings.Count(h, "*") > 1 {
			return apiErr("InvalidRequest", http.StatusBadRequest,
				fmt.Sprintf("AllowedHeader %q can not have more than one wildcard.", h))
		}
	}
	for _, h := range r.ExposeHeaders {
		if strings.Contains(h, "*") {
			return apiErr("InvalidRequest", http.StatusBadRequest,
				fmt.Sprintf("ExposeHeader %q contains wildcard. We currently do not support wildcard for ExposeHeader.", h))
		}
	}
	if r.MaxAgeSeconds != nil && *r.MaxAgeSeconds < 0 {
		return apiErr("InvalidRequest", http.StatusBadRequest, "MaxAgeSeconds must not be negative.")
	}
	return nil
}

// wildcardMatch reports whether s matches pattern, which holds at most one
// '*' standing for any run of characters. Case matters, as it does for an
// origin in S3; headerMatch is the match for header names, whose case
// does not.
func wildcardMatch(pattern, s string) bool {
	pre, suf, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == s
	}
	return len(s) >= len(pre)+len(suf) && strings.HasPrefix(s, pre) && strings.HasSuffix(s, suf)
}

// headerMatch is wildcardMatch ignoring case.
func headerMatch(pattern, s string) bool {
	return wildcardMatch(strings.ToLower(pattern), strings.ToLower(s))
}

// match returns the first rule allowing origin, method and every one of
// headers, and whether the origin it matched is the wildcard "*".
func (c *corsConfiguration) match(origin, method string, headers []string) (*corsRule, bool) {
	for i := range c.Rules {
		r := &c.Rules[i]
		if !slices.Contains(r.AllowedMethods, method) {
			continue
		}
		oi := slices.IndexFunc(r.AllowedOrigins, func(p string) bool { return wildcardMatch(p, origin) })
		if oi < 0 {
			continue
		}
		if !allHeadersAllowed(r.AllowedHeaders, headers) {
			continue
		}
		return r, r.AllowedOrigins[oi] == "*"
	}
	return nil, false
}

func allHeadersAllowed(allowed, headers []string) bool {
	for _, h := range headers {
		if !slices.ContainsFunc(allowed, func(p string) bool { return headerMatch(p, h) }) {
			return false
		}
	}
	return true
}

// corsCache holds parsed configurations by their stored XML, so a request
// with an Origin does not parse its bucket's configuration again. Keyed by
// content, it is safe to share between servers.
var corsCache struct {
	sync.Mutex
	m map[string]*corsConfiguration
}

func cachedCORS(doc []byte) *corsConfiguration {
	corsCache.Lock()
	defer corsCache.Unlock()
	if c, ok := corsCache.m[string(doc)]; ok {
		return c
	}
	var c corsConfiguration
	if err := xml.Unmarshal(doc, &c); err != nil {
		return nil // never stored so: the edge validated it
	}
	if corsCache.m == nil || len(corsCache.m) >= 1024 {
		corsCache.m = map[string]*corsConfiguration{}
	}
	corsCache.m[string(doc)] = &c
	return &c
}

// bucketCORS returns the CORS configuration of bucket, or nil.
func (s *Server) bucketCORS(req *request) *corsConfiguration {
	if req.bucket == "" {
		return nil
	}
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil || len(b.CORS) == 0 {
		return nil
	}
	return cachedCORS(b.CORS)
}

func (s *Server) getBucketCors(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if len(b.CORS) == 0 {
		return errNoSuchCORS
	}
	writeStoredXML(req.w, b.CORS)
	return nil
}

func (s *Server) putBucketCors(req *request) error {
	data, err := io.ReadAll(io.LimitReader(req.r.Body, maxCORSSize+1))
	if err != nil {
		return err
	}
	if len(data) > maxCORSSize {
		return apiErr("MaxMessageLengthExceeded", http.StatusBadRequest,
			fmt.Sprintf("The CORS configuration exceeds the maximum allowed size of %d bytes.", maxCORSSize))
	}
	cfg, err := parseCORS(data)
	if err != nil {
		return err
	}
	doc, err := xml.Marshal(cfg)
	if err != nil {
		return err
	}
	return s.obj.SetBucketCORS(req.ctx, req.bucket, doc)
}

func (s *Server) deleteBucketCors(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if len(b.CORS) == 0 {
		return errNoSuchCORS
	}
	if err := s.obj.SetBucketCORS(req.ctx, req.bucket, nil); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// servePreflight answers an OPTIONS request, the browser's preflight,
// without authentication, as S3 does: 200 with the matching rule's
// headers, or 403 when no rule (or no configuration) allows the request.
func (s *Server) servePreflight(req *request) error {
	req.api = "PreflightObject"
	if req.key == "" {
		req.api = "PreflightBucket"
	}
	h := req.r.Header
	origin := h.Get("Origin")
	if origin == "" {
		return errCORSNoOrigin
	}
	method := h.Get("Access-Control-Request-Method")
	if method == "" {
		return apiErr("BadRequest", http.StatusBadRequest, "Invalid Access-Control-Request-Method: null")
	}
	cfg := s.bucketCORS(req)
	if cfg == nil {
		return errCORSDenied
	}
	var headers []string
	for _, v := range h.Values("Access-Control-Request-Headers") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
				headers = append(headers, f)
			}
		}
	}
	rule, wildcard := cfg.match(origin, method, headers)
	if rule == nil {
		return errCORSDenied
	}
	out := req.w.Header()
	setCORSHeaders(out, rule, origin, wildcard)
	if len(headers) > 0 {
		out.Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
	}
	if rule.MaxAgeSeconds != nil {
		out.Set("Access-Control-Max-Age", strconv.Itoa(*rule.MaxAgeSeconds))
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// setCORSHeaders writes the headers that allow origin by rule; wildcard
// answers any origin with "*", which carries no credentials.
func setCORSHeaders(out http.Header, rule *corsRule, origin string, wildcard bool) {
	out.Set("Vary", corsVary)
	if wildcard {
		out.Set("Access-Control-Allow-Origin", "*")
	} else {
		out.Set("Access-Control-Allow-Origin", origin)
		out.Set("Access-Control-Allow-Credentials", "true")
	}
	out.Set("Access-Control-Allow-Methods", strings.Join(rule.AllowedMethods, ", "))
	if len(rule.ExposeHeaders) > 0 {
		out.Set("Access-Control-Expose-Headers", strings.Join(rule.ExposeHeaders, ", "))
	}
}

// addCORSHeaders adds to an actual (not preflight) request's response,
// success or error, the headers of the bucket's CORS rule that allows its
// Origin and method, as S3 does. A signed request to a wildcard rule gets
// its origin echoed with credentials allowed; an anonymous one gets "*".
func (s *Server) addCORSHeaders(req *request) {
	origin := req.r.Header.Get("Origin")
	if origin == "" {
		return
	}
	cfg := s.bucketCORS(req)
	if cfg == nil {
		return
	}
	method := req.r.Method
	if m := req.r.Header.Get("Access-Control-Request-Method"); m != "" {
		method = m // what S3 matches when a client names it
	}
	rule, wildcard := cfg.match(origin, method, nil)
	if rule == nil {
		req.w.Header().Set("Vary", corsVary)
		return
	}
	setCORSHeaders(req.w.Header(), rule, origin, wildcard && !hasCredentials(req.r))
}

// hasCredentials reports whether r is signed (header or presigned URL).
func hasCredentials(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	q := r.URL.Query()
	return q.Has("X-Amz-Credential") || q.Has("AWSAccessKeyId")
}
