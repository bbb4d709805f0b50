package s3api

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/objects"
)

const maxPolicySize = 20 << 10

// maxListBuckets is the most buckets a ListBuckets page holds, and the
// bound of its max-buckets, as in S3.
const maxListBuckets = 10000

var errInvalidMaxBuckets = apiErr("InvalidArgument", http.StatusBadRequest, "Argument max-buckets must be an integer between 1 and 10000.")

// listBuckets answers ListBuckets: every bucket in name order, or, with
// max-buckets, a page of them and a continuation-token for the next
// (the name the page ended at, encoded); prefix keeps the names that
// start with it, and bucket-region those of that region (the site's own,
// or none).
func (s *Server) listBuckets(req *request) error {
	q := req.query
	limit := maxListBuckets
	if q.Has("max-buckets") {
		n, err := strconv.Atoi(q.Get("max-buckets"))
		if err != nil || n < 1 || n > maxListBuckets {
			return errInvalidMaxBuckets
		}
		limit = n
	}
	after := ""
	if token := q.Get("continuation-token"); token != "" {
		var err error
		if after, err = decodeToken(token); err != nil {
			return err
		}
	}
	prefix := q.Get("prefix")
	res := listAllMyBucketsResult{NS: s3NS, Owner: siteOwner, Buckets: []bucketInfo{}, Prefix: prefix}
	if region := q.Get("bucket-region"); region != "" && region != s.cfg.Region {
		writeXML(req.w, http.StatusOK, res)
		return nil
	}
	for _, b := range s.obj.ListBuckets(req.ctx) {
		if b.Name <= after || !strings.HasPrefix(b.Name, prefix) {
			continue
		}
		if len(res.Buckets) == limit {
			res.ContinuationToken = encodeToken(res.Buckets[limit-1].Name)
			break
		}
		res.Buckets = append(res.Buckets, bucketInfo{Name: b.Name, CreationDate: b.Created.Format("2006-01-02T15:04:05.000Z"), BucketRegion: s.cfg.Region})
	}
	writeXML(req.w, http.StatusOK, res)
	return nil
}

func (s *Server) createBucket(req *request) error {
	if req.r.ContentLength > 0 {
		var cfg createBucketConfiguration
		if err := decodeXML(req.r.Body, &cfg); err != nil {
			return err
		}
	}
	acl, _, err := aclFromHeaders(req.r.Header) // x-amz-acl (acl.go)
	if err != nil {
		return err
	}
	create := s.obj.CreateBucket
	if bucketLockRequested(req.r.Header) {
		create = s.obj.CreateBucketWithLock // versioned, with object lock (objectlock.go)
	}
	if err := create(req.ctx, req.bucket); err != nil {
		return err
	}
	if acl != "" && acl != objects.ACLPrivate {
		if err := s.obj.SetBucketACL(req.ctx, req.bucket, acl); err != nil {
			return err
		}
	}
	req.w.Header().Set("Location", "/"+req.bucket)
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) headBucket(req *request) error {
	if _, err := s.obj.Bucket(req.ctx, req.bucket); err != nil {
		return err
	}
	req.w.Header().Set("x-amz-bucket-region", s.cfg.Region)
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucket(req *request) error {
	if err := s.obj.DeleteBucket(req.ctx, req.bucket); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getBucketLocation(req *request) error {
	if _, err := s.obj.Bucket(req.ctx, req.bucket); err != nil {
		return err
	}
	loc := s.cfg.Region
	if loc == "us-east-1" {
		loc = ""
	}
	writeXML(req.w, http.StatusOK, locationConstraint{NS: s3NS, Value: loc})
	return nil
}

func (s *Server) getBucketVersioning(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	writeXML(req.w, http.StatusOK, versioningConfiguration{NS: s3NS, Status: b.Versioning})
	return nil
}

func (s *Server) putBucketVersioning(req *request) error {
	var cfg versioningConfiguration
	if err := decodeXML(req.r.Body, &cfg); err != nil {
		return err
	}
	if cfg.Status != objects.VersioningEnabled && cfg.Status != objects.VersioningSuspended {
		return errMalformedXML
	}
	if cfg.MFADelete == "Enabled" {
		return errMFAUnsupported
	}
	return s.obj.SetVersioning(req.ctx, req.bucket, cfg.Status)
}

func (s *Server) getBucketTagging(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if len(b.Tags) == 0 {
		return objects.ErrNoSuchTagSet
	}
	writeXML(req.w, http.StatusOK, tagsToXML(b.Tags))
	return nil
}

func (s *Server) putBucketTagging(req *request) error {
	tags, err := readTagging(req.r.Body, maxBucketTags)
	if err != nil {
		return err
	}
	return s.obj.SetBucketTags(req.ctx, req.bucket, tags)
}

func (s *Server) deleteBucketTagging(req *request) error {
	if err := s.obj.SetBucketTags(req.ctx, req.bucket, nil); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getBucketPolicy(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if len(b.Policy) == 0 {
		return objects.ErrNoSuchPolicy
	}
	req.w.Header().Set("Content-Type", "application/json")
	req.w.Write(b.Policy)
	return nil
}

func (s *Server) putBucketPolicy(req *request) error {
	data, err := io.ReadAll(io.LimitReader(req.r.Body, maxPolicySize+1))
	if err != nil {
		return err
	}
	if len(data) > maxPolicySize {
		return apiErr("PolicyTooLarge", 400, "Policy exceeds the maximum allowed document size.")
	}
	if _, err := policy.ParseBucket(data); err != nil {
		return apiErr(errMalformedPolicy.Code, errMalformedPolicy.Status, err.Error())
	}
	if err := s.obj.SetBucketPolicy(req.ctx, req.bucket, data); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteBucketPolicy(req *request) error {
	if err := s.obj.SetBucketPolicy(req.ctx, req.bucket, nil); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) getBucketEncryption(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	if b.Encryption == "" {
		return objects.ErrNoSuchEncryption
	}
	writeXML(req.w, http.StatusOK, sseConfiguration{NS: s3NS, Rules: []sseRule{{Algorithm: b.Encryption}}})
	return nil
}

func (s *Server) putBucketEncryption(req *request) error {
	var cfg sseConfiguration
	if err := decodeXML(req.r.Body, &cfg); err != nil {
		return err
	}
	if len(cfg.Rules) != 1 {
		return errMalformedXML
	}
	if cfg.Rules[0].Algorithm != objects.SSEAlgorithm {
		return apiErr("InvalidArgument", 400, "Only SSEAlgorithm AES256 is supported.")
	}
	return s.obj.SetBucketEncryption(req.ctx, req.bucket, objects.SSEAlgorithm)
}

func (s *Server) deleteBucketEncryption(req *request) error {
	if err := s.obj.SetBucketEncryption(req.ctx, req.bucket, ""); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

// tagsToXML returns a tag set sorted by key, so that every call answers
// in the same order (S3 does the same).
func tagsToXML(tags map[string]string) tagging {
	t := tagging{NS: s3NS, TagSet: []tag{}}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		t.TagSet = append(t.TagSet, tag{Key: k, Value: tags[k]})
	}
	return t
}

// Tag limits as S3 sets them.
const (
	maxObjectTags  = 10
	maxBucketTags  = 50
	maxTagKeyLen   = 128 // characters
	maxTagValueLen = 256 // characters
)

// readTagging parses a Tagging document of at most max tags.
func readTagging(body io.Reader, max int) (map[string]string, error) {
	var t tagging
	if err := decodeXML(body, &t); err != nil {
		return nil, err
	}
	kv := make([][2]string, 0, len(t.TagSet))
	for _, tg := range t.TagSet {
		kv = append(kv, [2]string{tg.Key, tg.Value})
	}
	return checkTags(kv, max)
}

// checkTags applies S3's rules to a tag set in the order given: at most
// max tags, unique keys of 1 to 128 characters not in the reserved aws:
// namespace, values of at most 256 characters, both of letters, digits,
// spaces and + - = . _ : / @. Any breach is InvalidTag.
func checkTags(kv [][2]string, max int) (map[string]string, error) {
	if len(kv) > max {
		return nil, apiErr("InvalidTag", http.StatusBadRequest, fmt.Sprintf("Cannot have more than %d tags.", max))
	}
	tags := make(map[string]string, len(kv))
	for _, p := range kv {
		k, v := p[0], p[1]
		switch {
		case k == "" || utf8.RuneCountInString(k) > maxTagKeyLen:
			return nil, apiErr("InvalidTag", http.StatusBadRequest, "The TagKey you have provided is too long, max 128.")
		case utf8.RuneCountInString(v) > maxTagValueLen:
			return nil, apiErr("InvalidTag", http.StatusBadRequest, "The TagValue you have provided is too long, max 256.")
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			return nil, apiErr("InvalidTag", http.StatusBadRequest, "Your TagKey cannot be prefixed with aws:")
		case !validTagText(k) || !validTagText(v):
			return nil, apiErr("InvalidTag", http.StatusBadRequest, "The TagKey or TagValue you have provided contains invalid characters.")
		}
		if _, dup := tags[k]; dup {
			return nil, apiErr("InvalidTag", http.StatusBadRequest, "Cannot provide multiple Tags with the same key.")
		}
		tags[k] = v
	}
	return tags, nil
}

// validTagText reports whether s uses only the characters S3 allows in
// tags: Unicode letters and digits, white space and + - = . _ : / @.
func validTagText(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsSpace(r) && !strings.ContainsRune("+-=._:/@", r) {
			return false
		}
	}
	return true
}
