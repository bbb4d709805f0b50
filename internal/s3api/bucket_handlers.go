package s3api

import (
	"io"
	"net/http"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/objects"
)

const maxPolicySize = 20 << 10

func (s *Server) listBuckets(req *request) error {
	res := listAllMyBucketsResult{NS: s3NS, Owner: siteOwner, Buckets: []bucketInfo{}}
	for _, b := range s.obj.ListBuckets(req.ctx) {
		res.Buckets = append(res.Buckets, bucketInfo{Name: b.Name, CreationDate: b.Created.Format("2006-01-02T15:04:05.000Z")})
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
	if err := s.obj.CreateBucket(req.ctx, req.bucket); err != nil {
		return err
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
	tags, err := readTagging(req.r.Body, 50)
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

func tagsToXML(tags map[string]string) tagging {
	t := tagging{NS: s3NS, TagSet: []tag{}}
	for k, v := range tags {
		t.TagSet = append(t.TagSet, tag{Key: k, Value: v})
	}
	return t
}

// readTagging parses a Tagging document; duplicate keys are InvalidTag.
func readTagging(body io.Reader, max int) (map[string]string, error) {
	var t tagging
	if err := decodeXML(body, &t); err != nil {
		return nil, err
	}
	if len(t.TagSet) > max {
		return nil, apiErr("BadRequest", 400, "Object tags cannot be greater than the allowed number.")
	}
	tags := make(map[string]string, len(t.TagSet))
	for _, tg := range t.TagSet {
		if _, dup := tags[tg.Key]; dup {
			return nil, errInvalidTag
		}
		tags[tg.Key] = tg.Value
	}
	return tags, nil
}
