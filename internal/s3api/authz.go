package s3api

import (
	"errors"
	"net"
	"net/netip"
	"strings"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/objects"
)

// Authorizer decides whether an identity may perform a request, given the
// bucket's compiled policy (nil for none). internal/iam implements it: root
// is always allowed, an anonymous request (accessKey "") only by a bucket
// policy allowing Principal "*".
type Authorizer interface {
	Authorize(accessKey string, bucket *policy.Policy, r *policy.Request) bool
}

// apiActions maps each S3 API (the route table's names) to its IAM action.
// Versioned variants are chosen in actionFor.
var apiActions = map[string]string{
	"ListBuckets":           "s3:ListAllMyBuckets",
	"GetBucketLocation":     "s3:GetBucketLocation",
	"GetBucketVersioning":   "s3:GetBucketVersioning",
	"PutBucketVersioning":   "s3:PutBucketVersioning",
	"GetBucketTagging":      "s3:GetBucketTagging",
	"PutBucketTagging":      "s3:PutBucketTagging",
	"DeleteBucketTagging":   "s3:PutBucketTagging",
	"GetBucketPolicy":       "s3:GetBucketPolicy",
	"PutBucketPolicy":       "s3:PutBucketPolicy",
	"DeleteBucketPolicy":    "s3:DeleteBucketPolicy",
	"GetBucketPolicyStatus": "s3:GetBucketPolicyStatus",

	"GetBucketWebsite":                   "s3:GetBucketWebsite",
	"GetPublicAccessBlock":               "s3:GetBucketPublicAccessBlock",
	"GetBucketOwnershipControls":         "s3:GetBucketOwnershipControls",
	"GetBucketAccelerateConfiguration":   "s3:GetAccelerateConfiguration",
	"GetBucketRequestPayment":            "s3:GetBucketRequestPayment",
	"GetBucketLogging":                   "s3:GetBucketLogging",
	"GetBucketNotificationConfiguration": "s3:GetBucketNotification",
	"GetBucketEncryption":                "s3:GetEncryptionConfiguration",
	"PutBucketEncryption":                "s3:PutEncryptionConfiguration",
	"DeleteBucketEncryption":             "s3:PutEncryptionConfiguration",
	"ListMultipartUploads":               "s3:ListBucketMultipartUploads",
	"ListObjectVersions":                 "s3:ListBucketVersions",
	"DeleteObjects":                      "s3:DeleteObject", // checked again per key
	"ListObjects":                        "s3:ListBucket",
	"HeadBucket":                         "s3:ListBucket",
	"CreateBucket":                       "s3:CreateBucket",
	"DeleteBucket":                       "s3:DeleteBucket",
	"GetObjectTagging":                   "s3:GetObjectTagging",
	"GetObjectAttributes":                "s3:GetObjectAttributes",
	"PutObjectTagging":                   "s3:PutObjectTagging",
	"DeleteObjectTagging":                "s3:DeleteObjectTagging",
	"CreateMultipartUpload":              "s3:PutObject",
	"CompleteMultipartUpload":            "s3:PutObject",
	"UploadPart":                         "s3:PutObject",
	"ListParts":                          "s3:ListMultipartUploadParts",
	"AbortMultipartUpload":               "s3:AbortMultipartUpload",
	"GetObject":                          "s3:GetObject",
	"HeadObject":                         "s3:GetObject",
	"PutObject":                          "s3:PutObject",
	"DeleteObject":                       "s3:DeleteObject",

	"GetObjectLockConfiguration": "s3:GetBucketObjectLockConfiguration",
	"PutObjectLockConfiguration": "s3:PutBucketObjectLockConfiguration",
	"GetObjectRetention":         "s3:GetObjectRetention",
	"PutObjectRetention":         "s3:PutObjectRetention",
	"GetObjectLegalHold":         "s3:GetObjectLegalHold",
	"PutObjectLegalHold":         "s3:PutObjectLegalHold",

	"GetBucketCors":                   "s3:GetBucketCORS",
	"PutBucketCors":                   "s3:PutBucketCORS",
	"DeleteBucketCors":                "s3:PutBucketCORS",
	"GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration",
	"PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle":           "s3:PutLifecycleConfiguration",

	"GetBucketAcl": "s3:GetBucketAcl",
	"PutBucketAcl": "s3:PutBucketAcl",
	"GetObjectAcl": "s3:GetObjectAcl",
	"PutObjectAcl": "s3:PutObjectAcl",
}

// versionedActions are the actions AWS checks instead when a request names
// a versionId.
var versionedActions = map[string]string{
	"s3:GetObject":           "s3:GetObjectVersion",
	"s3:DeleteObject":        "s3:DeleteObjectVersion",
	"s3:GetObjectTagging":    "s3:GetObjectVersionTagging",
	"s3:PutObjectTagging":    "s3:PutObjectVersionTagging",
	"s3:DeleteObjectTagging": "s3:DeleteObjectVersionTagging",
	"s3:GetObjectAttributes": "s3:GetObjectVersionAttributes",
	"s3:GetObjectAcl":        "s3:GetObjectVersionAcl",
	"s3:PutObjectAcl":        "s3:PutObjectVersionAcl",
}

// actionFor returns the action of a request to api.
func actionFor(api string, versioned bool) string {
	a := apiActions[api]
	if versioned {
		if v, ok := versionedActions[a]; ok {
			return v
		}
	}
	return a
}

// resourceARN returns the S3 resource ARN of bucket[/key]; with no bucket,
// every bucket.
func resourceARN(bucket, key string) string {
	switch {
	case bucket == "":
		return "arn:aws:s3:::*"
	case key == "":
		return "arn:aws:s3:::" + bucket
	}
	return "arn:aws:s3:::" + bucket + "/" + key
}

// conditionValues returns the S3 condition keys a request carries, or nil.
func conditionValues(req *request, api string) map[string]string {
	switch api {
	case "ListObjects", "ListObjectVersions":
		m := make(map[string]string, 3)
		for _, k := range []struct{ query, key string }{
			{"prefix", "s3:prefix"}, {"delimiter", "s3:delimiter"}, {"max-keys", "s3:max-keys"},
		} {
			if req.query.Has(k.query) {
				m[k.key] = req.query.Get(k.query)
			}
		}
		return m
	}
	var m map[string]string
	set := func(k, v string) {
		if m == nil {
			m = map[string]string{}
		}
		m[k] = v
	}
	h := req.r.Header
	headers := conditionHeaders[api]
	if api == "PutObject" && hget(h, "x-amz-copy-source") != "" {
		headers = conditionHeaders["CopyObject"]
	}
	for _, name := range headers {
		if v := hget(h, name); v != "" {
			set("s3:"+name, v)
		}
	}
	if _, ok := m["s3:x-amz-copy-source"]; ok {
		// As bucket/key, decoded and without a versionId, whichever form
		// the client sent ("/bucket/key", URL-encoded, "?versionId=").
		if sb, sk, _, err := copySource(h); err == nil {
			set("s3:x-amz-copy-source", sb+"/"+sk)
		}
	}
	if api == "PutObject" || api == "CreateMultipartUpload" {
		if hget(h, "x-amz-copy-source") != "" && hget(h, "x-amz-metadata-directive") == "" {
			set("s3:x-amz-metadata-directive", "COPY") // S3's default, which the condition sees
		}
		if t := hget(h, "x-amz-tagging"); t != "" {
			if tags, err := parseTagQuery(t); err == nil { // malformed: the handler refuses it
				for k, v := range tags {
					set("s3:requestobjecttag/"+strings.ToLower(k), v)
				}
			}
		}
	}
	if v := req.query.Get("versionId"); v != "" && req.key != "" {
		set("s3:versionid", v)
	}
	return m
}

// conditionHeaders are the request headers S3 offers as condition keys
// ("s3:" and the lower-case header name), by API.
var conditionHeaders = func() map[string][]string {
	acl := []string{"x-amz-acl", "x-amz-grant-read", "x-amz-grant-write", "x-amz-grant-read-acp", "x-amz-grant-write-acp", "x-amz-grant-full-control"}
	put := append([]string{"x-amz-server-side-encryption", "x-amz-server-side-encryption-customer-algorithm", "x-amz-storage-class"}, acl...)
	return map[string][]string{
		"PutObject":             put,
		"CreateMultipartUpload": put,
		"CopyObject":            append([]string{"x-amz-copy-source", "x-amz-metadata-directive"}, put...),
		"UploadPart":            {"x-amz-copy-source"},
		"PutObjectAcl":          acl,
		"PutBucketAcl":          acl,
		"CreateBucket":          acl,
	}
}()

// existingTagAPIs are the APIs acting on an existing object, whose tags
// the condition keys s3:ExistingObjectTag/<key> name.
var existingTagAPIs = map[string]bool{
	"GetObject": true, "HeadObject": true, "GetObjectTagging": true, "PutObjectTagging": true, "DeleteObjectTagging": true,
	"GetObjectAcl": true, "PutObjectAcl": true, "GetObjectAttributes": true, "GetObjectRetention": true,
	"PutObjectRetention": true, "GetObjectLegalHold": true, "PutObjectLegalHold": true,
}

// existingTagLookup answers s3:ExistingObjectTag/<key> for a request to
// api: the tag of the version the request names (the latest without a
// versionId), read once and only if a policy condition asks; absent when
// the object or the tag does not exist. Tag keys compare without case, as
// condition key names do.
func (s *Server) existingTagLookup(req *request, api string) func(string) (string, bool) {
	if !existingTagAPIs[api] || req.bucket == "" || req.key == "" {
		return nil
	}
	var tags map[string]string
	loaded := false
	return func(name string) (string, bool) {
		tag, ok := strings.CutPrefix(name, "s3:existingobjecttag/")
		if !ok {
			return "", false
		}
		if !loaded {
			loaded = true
			if v, err := s.obj.HeadObject(req.ctx, req.bucket, req.key, req.query.Get("versionId")); err == nil && !v.DeleteMarker {
				tags = v.Tags
			}
		}
		for k, v := range tags {
			if strings.EqualFold(k, tag) {
				return v, true
			}
		}
		return "", false
	}
}

// sourceIP is the client address for aws:SourceIp.
func sourceIP(remoteAddr string) netip.Addr {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, _ := netip.ParseAddr(strings.Trim(host, "[]"))
	return a.Unmap()
}

// allowed asks the Authorizer whether the request's identity may perform
// action on bucket[/key]. Without an Authorizer every signed request is
// allowed and anonymous ones are not (the behaviour before IAM).
func (s *Server) allowed(req *request, action, bucket, key string, values map[string]string) bool {
	return s.allowedWith(req, action, bucket, key, values, nil)
}

// allowedWith is allowed with lookup answering the condition keys values
// does not hold (policy.Request.Lookup).
func (s *Server) allowedWith(req *request, action, bucket, key string, values map[string]string, lookup func(string) (string, bool)) bool {
	if s.cfg.Authorizer == nil {
		return !req.auth.Anonymous
	}
	var bp *policy.Policy
	if bucket != "" {
		if b, err := s.obj.Bucket(req.ctx, bucket); err == nil && (len(b.Policy) > 0 || b.ACL != "") {
			bp = s.bucketPolicyOf(&b) // the bucket policy and the bucket's ACL (acl.go)
		}
	}
	r := &policy.Request{
		Action: action, Resource: resourceARN(bucket, key), Anonymous: req.auth.Anonymous,
		AccessKey: req.auth.AccessKey, SourceIP: sourceIP(req.r.RemoteAddr), Secure: req.r.TLS != nil, Values: values,
		Lookup: func(name string) (string, bool) {
			if h, ok := headerConditionKeys[name]; ok {
				v := req.r.Header.Get(h)
				return v, v != ""
			}
			if lookup != nil {
				return lookup(name)
			}
			return "", false
		},
	}
	return s.cfg.Authorizer.Authorize(req.auth.AccessKey, bp, r)
}

// headerConditionKeys are the global condition keys read from a request
// header, by lower-case key name: absent when the header is.
var headerConditionKeys = map[string]string{
	"aws:referer":   "Referer",
	"aws:useragent": "User-Agent",
}

// authorize checks a routed request and, for a copy, read access to its
// source.
func (s *Server) authorize(req *request, rt *route) error {
	action := actionFor(rt.api, req.query.Get("versionId") != "")
	if !s.allowedWith(req, action, req.bucket, req.key, conditionValues(req, rt.api), s.existingTagLookup(req, rt.api)) && !s.allowedByObjectACL(req, rt.api, action) {
		if err := s.missingToLister(req, rt.api); err != nil {
			return err
		}
		if err := s.missingBucket(req, rt.api); err != nil {
			return err
		}
		return errAccessDenied
	}
	if !s.aclWriteAllowed(req, rt.api) {
		return errAccessDenied
	}
	if (rt.api == "PutObject" || rt.api == "UploadPart") && req.r.Header.Get("x-amz-copy-source") != "" {
		sb, sk, sv, err := copySource(req.r.Header)
		if err != nil {
			return err
		}
		if a := actionFor("GetObject", sv != ""); !s.allowed(req, a, sb, sk, nil) && !s.objectACLAllows(req, sb, sk, sv, a) {
			return errAccessDenied
		}
	}
	return nil
}

// missingBucket is the answer to a request that was not allowed, on a
// bucket that does not exist: NoSuchBucket (404), to anyone, anonymous
// too, as S3 answers (bucket names are not secret: creating one tells
// whether it is taken); nil otherwise.
func (s *Server) missingBucket(req *request, api string) error {
	if req.bucket == "" || api == "CreateBucket" {
		return nil
	}
	if _, err := s.obj.Bucket(req.ctx, req.bucket); errors.Is(err, objects.ErrBucketNotFound) {
		return err
	}
	return nil
}

// missingToLister is the answer to a GET or HEAD that was not allowed, of
// an object that does not exist, for an identity allowed to list the
// bucket (s3:ListBucket with s3:prefix the key): NoSuchKey or
// NoSuchVersion (404), which listing would tell it anyway, as S3 and MinIO
// answer; nil otherwise (AccessDenied stays, so nobody else learns
// whether the key exists).
func (s *Server) missingToLister(req *request, api string) error {
	if api != "GetObject" && api != "HeadObject" || req.bucket == "" || req.key == "" {
		return nil
	}
	v, err := s.obj.HeadObject(req.ctx, req.bucket, req.key, req.query.Get("versionId"))
	switch {
	case errors.Is(err, objects.ErrVersionNotFound):
	case errors.Is(err, objects.ErrObjectNotFound):
	case err == nil && v.DeleteMarker:
		err = objects.ErrObjectNotFound
	default:
		return nil
	}
	if !s.allowed(req, "s3:ListBucket", req.bucket, "", map[string]string{"s3:prefix": req.key}) {
		return nil
	}
	return err
}
