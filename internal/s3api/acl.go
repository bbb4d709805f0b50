package s3api

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/objects"
)

// ACLs, as S3 serves them with "bucket owner enforced" object ownership:
// every bucket and object belongs to the site's owner, and the only ACLs
// are the canned ones (x-amz-acl on CreateBucket, PutObject, CopyObject,
// CreateMultipartUpload and PutBucketAcl/PutObjectAcl). An explicit grant
// list (a body or x-amz-grant-* headers) is accepted when it is exactly a
// canned ACL's grants, and refused otherwise, never ignored. The canned ACL
// is stored in the bucket record or the version (objects.Bucket.ACL,
// objects.Version.ACL) and replicates with them.
//
// Enforcement: the grants a canned ACL implies are turned into bucket
// policy statements evaluated together with the bucket policy, so that an
// explicit Deny in any policy still wins over an ACL's Allow.

// The grantee groups of canned ACLs.
const (
	groupAllUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	groupAuthenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
	xsiNS                   = "http://www.w3.org/2001/XMLSchema-instance"
)

var (
	errMalformedACL = apiErr("MalformedACLError", http.StatusBadRequest,
		"The XML you provided was not well-formed or did not validate against our published schema.")
	errACLNotSupported = apiErr("AccessControlListNotSupported", http.StatusBadRequest,
		"The bucket does not allow ACLs: only the grants of a canned ACL (private, public-read, public-read-write, authenticated-read, bucket-owner-read, bucket-owner-full-control) can be set.")
	errCannedAndGrants = apiErr("InvalidRequest", http.StatusBadRequest,
		"Specifying both Canned ACLs and Header Grants is not allowed")
	errACLHeaderAndBody = apiErr("UnexpectedContent", http.StatusBadRequest,
		"This request does not support content")
	errUnresolvableEmail = apiErr("UnresolvableGrantByEmailAddress", http.StatusBadRequest,
		"The e-mail address you provided does not match any account on record.")
	errMissingACL = apiErr("MissingSecurityHeader", http.StatusBadRequest,
		"Your request was missing a required header: x-amz-acl, an x-amz-grant-* header or an AccessControlPolicy body.")
)

// grant is one ACL grant: a grantee (by canonical ID, group URI or email)
// and a permission.
type grant struct {
	kind  string // "id", "uri" or "emailAddress"
	value string
	perm  string // READ, WRITE, READ_ACP, WRITE_ACP, FULL_CONTROL
}

// cannedGrants returns the grants a canned ACL (stored form) implies. The
// bucket-owner-* ACLs grant the bucket owner, who is the object owner too.
func cannedGrants(acl string) []grant {
	g := []grant{{"id", siteOwner.ID, "FULL_CONTROL"}}
	switch acl {
	case objects.ACLPublicRead:
		g = append(g, grant{"uri", groupAllUsers, "READ"})
	case objects.ACLPublicReadWrite:
		g = append(g, grant{"uri", groupAllUsers, "READ"}, grant{"uri", groupAllUsers, "WRITE"})
	case objects.ACLAuthenticatedRead:
		g = append(g, grant{"uri", groupAuthenticatedUsers, "READ"})
	}
	return g
}

// cannedFor returns the canned ACL whose grants are exactly
// gs, in any order and with repeats.
func cannedFor(gs []grant) (string, error) {
	for _, g := range gs {
		if g.kind == "emailAddress" { // no account here has one
			return "", errUnresolvableEmail
		}
	}
	want := slices.Clone(gs)
	cmp := func(a, b grant) int {
		return strings.Compare(a.kind+"\x00"+a.value+"\x00"+a.perm, b.kind+"\x00"+b.value+"\x00"+b.perm)
	}
	slices.SortFunc(want, cmp)
	want = slices.Compact(want)
	for _, acl := range []string{objects.ACLPrivate, objects.ACLPublicRead, objects.ACLPublicReadWrite, objects.ACLAuthenticatedRead} {
		have := cannedGrants(acl)
		slices.SortFunc(have, cmp)
		if slices.Equal(have, want) {
			return acl, nil
		}
	}
	return "", errACLNotSupported
}

// grantHeaders maps the x-amz-grant-* headers to their permissions.
var grantHeaders = []struct{ header, perm string }{
	{"x-amz-grant-read", "READ"},
	{"x-amz-grant-write", "WRITE"},
	{"x-amz-grant-read-acp", "READ_ACP"},
	{"x-amz-grant-write-acp", "WRITE_ACP"},
	{"x-amz-grant-full-control", "FULL_CONTROL"},
}

// aclFromHeaders reads the canned ACL a request's headers ask for:
// x-amz-acl or x-amz-grant-* (as a canned ACL's grants); "" when they name
// none.
func aclFromHeaders(h http.Header) (string, bool, error) {
	var gs []grant
	named := false
	for _, gh := range grantHeaders {
		for _, v := range hvalues(h, gh.header) {
			named = true
			for item := range strings.SplitSeq(v, ",") {
				item = strings.TrimSpace(item)
				if item == "" {
					continue
				}
				k, val, ok := strings.Cut(item, "=")
				k = strings.TrimSpace(k)
				val = strings.Trim(strings.TrimSpace(val), `"`)
				if !ok || val == "" || (k != "id" && k != "uri" && k != "emailAddress") {
					return "", true, apiErr("InvalidArgument", http.StatusBadRequest, "Invalid grant header "+gh.header+": "+item)
				}
				gs = append(gs, grant{k, val, gh.perm})
			}
		}
	}
	canned := hget(h, "x-amz-acl")
	if canned != "" && named {
		return "", true, errCannedAndGrants
	}
	if named {
		acl, err := cannedFor(gs)
		return acl, true, err
	}
	if canned == "" {
		return "", false, nil
	}
	acl, err := parseCannedACL(canned)
	return acl, true, err
}

// parseCannedACL checks an x-amz-acl value.
func parseCannedACL(v string) (string, error) {
	switch v {
	case "aws-exec-read", "log-delivery-write":
		return "", apiErr("NotImplemented", http.StatusNotImplemented,
			"The canned ACL "+v+" is not supported: it grants to AWS services this server does not have.")
	}
	if _, err := objects.CanonicalACL(v); err != nil {
		return "", apiErr("InvalidArgument", http.StatusBadRequest, "Invalid canned ACL: "+v)
	}
	return v, nil
}

type accessControlPolicy struct {
	XMLName xml.Name   `xml:"AccessControlPolicy"`
	NS      string     `xml:"xmlns,attr"`
	Owner   owner      `xml:"Owner"`
	Grants  []aclGrant `xml:"AccessControlList>Grant"`
}

type aclGrant struct {
	Grantee    aclGrantee `xml:"Grantee"`
	Permission string     `xml:"Permission"`
}

type aclGrantee struct {
	XSI         string `xml:"xmlns:xsi,attr"`
	Type        string `xml:"xsi:type,attr"`
	ID          string `xml:"ID,omitempty"`
	DisplayName string `xml:"DisplayName,omitempty"`
	URI         string `xml:"URI,omitempty"`
}

// aclPolicyIn is a PutBucketAcl/PutObjectAcl body; the grantee's kind is
// read from which element it has.
type aclPolicyIn struct {
	XMLName xml.Name `xml:"AccessControlPolicy"`
	Owner   *struct {
		ID string `xml:"ID"`
	} `xml:"Owner"`
	Grants []struct {
		Grantee *struct {
			ID    string `xml:"ID"`
			URI   string `xml:"URI"`
			Email string `xml:"EmailAddress"`
		} `xml:"Grantee"`
		Permission string `xml:"Permission"`
	} `xml:"AccessControlList>Grant"`
}

func aclDocument(acl string) accessControlPolicy {
	doc := accessControlPolicy{NS: s3NS, Owner: siteOwner}
	for _, g := range cannedGrants(acl) {
		ge := aclGrantee{XSI: xsiNS, Type: "Group", URI: g.value}
		if g.kind == "id" {
			ge = aclGrantee{XSI: xsiNS, Type: "CanonicalUser", ID: g.value, DisplayName: siteOwner.DisplayName}
		}
		doc.Grants = append(doc.Grants, aclGrant{Grantee: ge, Permission: g.perm})
	}
	return doc
}

// parseACLBody reads an AccessControlPolicy body as a canned ACL.
func parseACLBody(data []byte) (string, error) {
	var in aclPolicyIn
	if err := xml.Unmarshal(data, &in); err != nil {
		return "", errMalformedACL
	}
	if in.Owner != nil && in.Owner.ID != "" && in.Owner.ID != siteOwner.ID {
		return "", apiErr("InvalidArgument", http.StatusBadRequest, "Invalid id: the owner is "+siteOwner.ID)
	}
	gs := make([]grant, 0, len(in.Grants))
	for _, g := range in.Grants {
		if g.Grantee == nil {
			return "", errMalformedACL
		}
		switch g.Permission {
		case "READ", "WRITE", "READ_ACP", "WRITE_ACP", "FULL_CONTROL":
		default:
			return "", errMalformedACL
		}
		switch {
		case g.Grantee.ID != "":
			gs = append(gs, grant{"id", g.Grantee.ID, g.Permission})
		case g.Grantee.URI != "":
			gs = append(gs, grant{"uri", g.Grantee.URI, g.Permission})
		case g.Grantee.Email != "":
			gs = append(gs, grant{"emailAddress", g.Grantee.Email, g.Permission})
		default:
			return "", errMalformedACL
		}
	}
	return cannedFor(gs)
}

// requestedACL reads the ACL of a PutBucketAcl or PutObjectAcl: headers or
// a body, not both.
func requestedACL(req *request) (string, error) {
	acl, named, err := aclFromHeaders(req.r.Header)
	if err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(req.r.Body, maxXMLBody+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxXMLBody {
		return "", errEntityTooLarge
	}
	hasBody := len(bytes.TrimSpace(data)) > 0
	switch {
	case named && hasBody:
		return "", errACLHeaderAndBody
	case named:
		return acl, nil
	case hasBody:
		return parseACLBody(data)
	}
	return "", errMissingACL
}

func (s *Server) getBucketAcl(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	writeXML(req.w, http.StatusOK, aclDocument(b.ACL))
	return nil
}

func (s *Server) putBucketAcl(req *request) error {
	if _, err := s.obj.Bucket(req.ctx, req.bucket); err != nil {
		return err
	}
	acl, err := requestedACL(req)
	if err != nil {
		return err
	}
	return s.obj.SetBucketACL(req.ctx, req.bucket, acl)
}

func (s *Server) getObjectAcl(req *request) error {
	v, err := s.lookupForRead(req)
	if err != nil {
		return err
	}
	if v.VersionID != objects.NullVersionID {
		setVersionHeader(req.w.Header(), v.VersionID)
	}
	writeXML(req.w, http.StatusOK, aclDocument(v.ACL))
	return nil
}

func (s *Server) putObjectAcl(req *request) error {
	if _, err := s.obj.HeadObject(req.ctx, req.bucket, req.key, req.query.Get("versionId")); err != nil {
		return err
	}
	acl, err := requestedACL(req)
	if err != nil {
		return err
	}
	v, err := s.obj.SetObjectACL(req.ctx, req.bucket, req.key, req.query.Get("versionId"), acl)
	if err != nil {
		return err
	}
	if v.VersionID != objects.NullVersionID {
		setVersionHeader(req.w.Header(), v.VersionID)
	}
	return nil
}

// Enforcement.

// aclStatement is a bucket policy statement an ACL grant stands for.
type aclStatement struct {
	Effect    string                       `json:"Effect"`
	Principal string                       `json:"Principal"`
	Action    []string                     `json:"Action"`
	Resource  []string                     `json:"Resource"`
	Condition map[string]map[string]string `json:"Condition,omitempty"`
}

// authenticatedOnly limits a statement to signed requests.
var authenticatedOnly = map[string]map[string]string{"StringEquals": {"aws:PrincipalType": "User"}}

// Actions a bucket's canned ACL allows: READ lists the bucket (objects,
// versions, uploads, as S3's bucket READ does); WRITE writes and deletes
// objects. Reading an object is decided by the object's own ACL alone, as
// in S3 (allowedByObjectACL): a public bucket does not publish the objects
// in it; a bucket policy (`anonymous set download`) does.
var (
	aclBucketRead = []string{"s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketVersions",
		"s3:ListBucketMultipartUploads"}
	aclBucketWrite = []string{"s3:PutObject", "s3:DeleteObject", "s3:ListMultipartUploadParts", "s3:AbortMultipartUpload"}
)

// bucketACLStatements returns the statements a bucket's canned ACL allows.
func bucketACLStatements(bucket, acl string) []aclStatement {
	res := []string{resourceARN(bucket, ""), resourceARN(bucket, "") + "/*"}
	read := aclStatement{Effect: "Allow", Principal: "*", Action: aclBucketRead, Resource: res}
	switch acl {
	case objects.ACLPublicRead:
		return []aclStatement{read}
	case objects.ACLPublicReadWrite:
		return []aclStatement{read, {Effect: "Allow", Principal: "*", Action: aclBucketWrite, Resource: res}}
	case objects.ACLAuthenticatedRead:
		read.Condition = authenticatedOnly
		return []aclStatement{read}
	}
	return nil
}

// objectACLStatements returns the statements an object's canned ACL
// allows: reading that object.
func objectACLStatements(bucket, key, acl string) []aclStatement {
	st := aclStatement{Effect: "Allow", Principal: "*", Action: []string{"s3:GetObject", "s3:GetObjectVersion"},
		Resource: []string{resourceARN(bucket, key)}}
	switch acl {
	case objects.ACLPublicRead, objects.ACLPublicReadWrite:
		return []aclStatement{st}
	case objects.ACLAuthenticatedRead:
		st.Condition = authenticatedOnly
		return []aclStatement{st}
	}
	return nil
}

// withStatements returns the bucket policy document raw (none when empty)
// with extra statements appended.
func withStatements(raw []byte, extra []aclStatement) ([]byte, error) {
	doc := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
	}
	var sts []json.RawMessage
	if st := bytes.TrimSpace(doc["Statement"]); len(st) > 0 {
		if st[0] == '[' {
			if err := json.Unmarshal(st, &sts); err != nil {
				return nil, err
			}
		} else {
			sts = append(sts, st)
		}
	}
	for _, e := range extra {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		sts = append(sts, b)
	}
	all, err := json.Marshal(sts)
	if err != nil {
		return nil, err
	}
	doc["Statement"] = all
	if _, ok := doc["Version"]; !ok {
		doc["Version"] = json.RawMessage(`"` + policy.Version2012 + `"`)
	}
	return json.Marshal(doc)
}

// compileWithACL compiles a bucket policy with ACL statements. A stored
// policy that does not parse contributes nothing (as in allowed), the ACL
// statements still apply.
func (s *Server) compileWithACL(bucket string, raw []byte, extra []aclStatement) *policy.Policy {
	doc, err := withStatements(raw, extra)
	var p *policy.Policy
	if err == nil {
		p, err = policy.ParseBucket(doc)
	}
	if err != nil {
		s.log.Warn("stored bucket policy does not parse; it is ignored", "bucket", bucket, "err", err)
		if doc, err = withStatements(nil, extra); err == nil {
			p, err = policy.ParseBucket(doc)
		}
		if err != nil {
			s.log.Error("ACL statements do not compile", "bucket", bucket, "err", err)
			return nil
		}
	}
	return p
}

// aclPolicyCache holds each bucket's compiled bucket policy plus bucket
// ACL statements, recompiled when either changes, and the same plus an
// object's ACL statement for objects recently read through their ACL.
type aclPolicyCache struct {
	mu   sync.RWMutex
	m    map[string]aclCached
	objs map[[2]string]aclCached // by bucket and key; acl is bucket ACL + "/" + object ACL
}

type aclCached struct {
	data *byte
	n    int
	acl  string
	p    *policy.Policy
}

// maxObjectACLPolicies bounds the objects whose compiled policy is kept;
// the set is dropped whole when full.
const maxObjectACLPolicies = 4096

// objectPolicy returns the compiled policy of bucket b with the statements
// of an object's ACL.
func (s *Server) objectPolicy(b *objects.Bucket, key, objectACL string, extra []aclStatement) *policy.Policy {
	c := &s.aclPolicies
	data, id, k := unsafe.SliceData(b.Policy), b.ACL+"/"+objectACL, [2]string{b.Name, key}
	c.mu.RLock()
	e, ok := c.objs[k]
	c.mu.RUnlock()
	if ok && e.data == data && e.n == len(b.Policy) && e.acl == id {
		return e.p
	}
	p := s.compileWithACL(b.Name, b.Policy, append(bucketACLStatements(b.Name, b.ACL), extra...))
	c.mu.Lock()
	if c.objs == nil || len(c.objs) >= maxObjectACLPolicies {
		c.objs = map[[2]string]aclCached{}
	}
	c.objs[k] = aclCached{data: data, n: len(b.Policy), acl: id, p: p}
	c.mu.Unlock()
	return p
}

// bucketPolicyOf returns the compiled policy that governs bucket b: its
// bucket policy and, when it has a canned ACL other than private, the
// statements that ACL stands for.
func (s *Server) bucketPolicyOf(b *objects.Bucket) *policy.Policy {
	extra := bucketACLStatements(b.Name, b.ACL)
	if len(extra) == 0 {
		bp, err := s.bucketPolicies.Get(b.Name, b.Policy)
		if err != nil {
			s.log.Warn("stored bucket policy does not parse; it is ignored", "bucket", b.Name, "err", err)
		}
		return bp
	}
	c := &s.aclPolicies
	data := unsafe.SliceData(b.Policy)
	c.mu.RLock()
	e, ok := c.m[b.Name]
	c.mu.RUnlock()
	if ok && e.data == data && e.n == len(b.Policy) && e.acl == b.ACL {
		return e.p
	}
	p := s.compileWithACL(b.Name, b.Policy, extra)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]aclCached{}
	}
	c.m[b.Name] = aclCached{data: data, n: len(b.Policy), acl: b.ACL, p: p}
	c.mu.Unlock()
	return p
}

// allowedByObjectACL reports whether the object's canned ACL allows a
// GetObject or HeadObject the policies alone did not allow (an object
// without an ACL of its own is private, whatever its bucket's). The grant is
// evaluated together with the bucket policy and the identity's policies,
// so an explicit Deny still wins. The version is read only on that denied
// path.
func (s *Server) allowedByObjectACL(req *request, api, action string) bool {
	if api != "GetObject" && api != "HeadObject" {
		return false
	}
	return s.objectACLAllows(req, req.bucket, req.key, req.query.Get("versionId"), action)
}

// objectACLAllows reports whether the ACL of bucket/key (version
// versionID) lets the request's identity read it (action s3:GetObject or
// s3:GetObjectVersion): for GET and HEAD, and for the source of a copy.
func (s *Server) objectACLAllows(req *request, bucket, key, versionID, action string) bool {
	if s.cfg.Authorizer == nil || bucket == "" || key == "" {
		return false
	}
	b, err := s.obj.Bucket(req.ctx, bucket)
	if err != nil {
		return false
	}
	v, err := s.obj.HeadObject(req.ctx, bucket, key, versionID)
	if err != nil || v.DeleteMarker {
		return false
	}
	acl := v.ACL
	extra := objectACLStatements(bucket, key, acl)
	if len(extra) == 0 || acl == objects.ACLAuthenticatedRead && req.auth.Anonymous {
		return false
	}
	p := s.objectPolicy(&b, key, acl, extra)
	if p == nil {
		return false
	}
	r := &policy.Request{
		Action: action, Resource: resourceARN(bucket, key), Anonymous: req.auth.Anonymous,
		AccessKey: req.auth.AccessKey, SourceIP: sourceIP(req.r.RemoteAddr), Secure: req.r.TLS != nil,
	}
	return s.cfg.Authorizer.Authorize(req.auth.AccessKey, p, r)
}

// aclWriteAllowed checks, for a write that names an ACL granting more than
// private (x-amz-acl or grant headers), that the identity may also set an
// object's ACL (s3:PutObjectAcl), as S3 requires: a writer allowed only to
// put objects, say anonymously into a public-read-write bucket, cannot
// publish them.
func (s *Server) aclWriteAllowed(req *request, api string) bool {
	switch api {
	case "PutObject", "CreateMultipartUpload":
	default:
		return true
	}
	acl, named, err := aclFromHeaders(req.r.Header)
	if err != nil || !named || acl == objects.ACLPrivate || acl == objects.ACLBucketOwnerRead || acl == objects.ACLBucketOwnerFullControl {
		return true // a malformed ACL is refused by the handler
	}
	return s.allowed(req, "s3:PutObjectAcl", req.bucket, req.key, nil)
}
