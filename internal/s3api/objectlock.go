package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/objects"
)

// Object lock: GetObjectLockConfiguration/PutObjectLockConfiguration on a
// bucket, Get/PutObjectRetention and Get/PutObjectLegalHold on an object,
// the lock headers of writes and reads, and x-amz-bypass-governance-retention
// on deletes and retention changes (the rules live in objects/lock.go).

const (
	hdrLockMode       = "x-amz-object-lock-mode"
	hdrLockUntil      = "x-amz-object-lock-retain-until-date"
	hdrLegalHold      = "x-amz-object-lock-legal-hold"
	hdrBypass         = "x-amz-bypass-governance-retention"
	hdrBucketLock     = "x-amz-bucket-object-lock-enabled"
	actionBypass      = "s3:BypassGovernanceRetention"
	actionPutRetain   = "s3:PutObjectRetention"
	actionPutHold     = "s3:PutObjectLegalHold"
	lockDateLayoutOut = "2006-01-02T15:04:05.000Z"
)

var (
	errLockMalformed         = errMalformedXML
	errInvalidRetention      = apiErr("InvalidRetentionPeriod", http.StatusBadRequest, "The retention period must be a positive integer: Days at most 36500, Years at most 100.")
	errLockHeadersIncomplete = apiErr("InvalidArgument", http.StatusBadRequest, "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied.")
	errLockBadMode           = apiErr("InvalidArgument", http.StatusBadRequest, "Unknown wormMode directive.")
	errLockBadDate           = apiErr("InvalidArgument", http.StatusBadRequest, "The retain until date must be an ISO 8601 date in the future.")
	errLockBadHold           = apiErr("InvalidArgument", http.StatusBadRequest, "Legal Hold must be either of 'ON' or 'OFF'.")
)

// The object layer's lock errors, in the edge's error table.
func init() {
	errorTable = append(errorTable, []struct {
		err error
		api *APIError
	}{
		{objects.ErrObjectLocked, apiErr("AccessDenied", http.StatusForbidden, "Access Denied because object protected by object lock.")},
		{objects.ErrLockNotEnabled, apiErr("InvalidRequest", http.StatusBadRequest, "Bucket is missing Object Lock Configuration.")},
		{objects.ErrNoLockConfig, apiErr("ObjectLockConfigurationNotFoundError", http.StatusNotFound, "Object Lock configuration does not exist for this bucket.")},
		{objects.ErrNoObjectLock, apiErr("NoSuchObjectLockConfiguration", http.StatusNotFound, "The specified object does not have a ObjectLock configuration.")},
		{objects.ErrLockBucketState, apiErr("InvalidBucketState", http.StatusConflict, "Object lock needs versioning enabled, and versioning cannot be suspended on a bucket with object lock.")},
		{objects.ErrInvalidLock, apiErr("InvalidArgument", http.StatusBadRequest, "The object lock request is not valid.")},
	}...)
}

type objectLockConfiguration struct {
	XMLName           xml.Name        `xml:"ObjectLockConfiguration"`
	NS                string          `xml:"xmlns,attr,omitempty"`
	ObjectLockEnabled string          `xml:"ObjectLockEnabled,omitempty"`
	Rule              *objectLockRule `xml:"Rule,omitempty"`
}

type objectLockRule struct {
	DefaultRetention *defaultRetention `xml:"DefaultRetention"`
}

type defaultRetention struct {
	Mode  string `xml:"Mode"`
	Days  *int   `xml:"Days,omitempty"`
	Years *int   `xml:"Years,omitempty"`
}

type retentionXML struct {
	XMLName         xml.Name `xml:"Retention"`
	NS              string   `xml:"xmlns,attr,omitempty"`
	Mode            string   `xml:"Mode,omitempty"`
	RetainUntilDate string   `xml:"RetainUntilDate,omitempty"`
}

type legalHoldXML struct {
	XMLName xml.Name `xml:"LegalHold"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Status  string   `xml:"Status"`
}

// bucketLockRequested reports whether CreateBucket asks for object lock.
func bucketLockRequested(h http.Header) bool { return isTrue(h.Get(hdrBucketLock)) }

func (s *Server) getObjectLockConfiguration(req *request) error {
	c, err := s.obj.ObjectLockConfig(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	out := objectLockConfiguration{NS: s3NS, ObjectLockEnabled: "Enabled"}
	if c.Mode != "" {
		dr := &defaultRetention{Mode: c.Mode}
		if c.Years > 0 {
			y := c.Years
			dr.Years = &y
		} else {
			d := c.Days
			dr.Days = &d
		}
		out.Rule = &objectLockRule{DefaultRetention: dr}
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func (s *Server) putObjectLockConfiguration(req *request) error {
	var in objectLockConfiguration
	if err := decodeXML(req.r.Body, &in); err != nil {
		return err
	}
	c, err := lockConfigFromXML(in)
	if err != nil {
		return err
	}
	if err := s.obj.SetObjectLockConfig(req.ctx, req.bucket, c); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// lockConfigFromXML validates a PutObjectLockConfiguration body as S3
// does: MalformedXML for a wrong status or mode or both periods,
// InvalidRetentionPeriod for a period out of bounds.
func lockConfigFromXML(in objectLockConfiguration) (objects.LockConfig, error) {
	if in.ObjectLockEnabled != "Enabled" {
		return objects.LockConfig{}, errLockMalformed
	}
	if in.Rule == nil {
		return objects.LockConfig{}, nil
	}
	dr := in.Rule.DefaultRetention
	if dr == nil {
		return objects.LockConfig{}, errLockMalformed
	}
	if dr.Mode != objects.LockGovernance && dr.Mode != objects.LockCompliance {
		return objects.LockConfig{}, errLockMalformed
	}
	if (dr.Days == nil) == (dr.Years == nil) {
		return objects.LockConfig{}, errLockMalformed
	}
	c := objects.LockConfig{Mode: dr.Mode}
	if dr.Days != nil {
		c.Days = *dr.Days
		if c.Days <= 0 || c.Days > objects.MaxLockDays {
			return c, errInvalidRetention
		}
	} else {
		c.Years = *dr.Years
		if c.Years <= 0 || c.Years > objects.MaxLockYears {
			return c, errInvalidRetention
		}
	}
	return c, objects.ValidateLockConfig(c)
}

// parseLockDate reads an ISO 8601 retain-until date.
func parseLockDate(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errLockBadDate
}

// lockOptions reads the lock headers of a write (PutObject, CopyObject,
// CreateMultipartUpload). Asking for a retention or a legal hold needs
// s3:PutObjectRetention or s3:PutObjectLegalHold besides s3:PutObject, as
// in S3.
func (s *Server) lockOptions(req *request) (objects.Lock, error) {
	h := req.r.Header
	var k objects.Lock
	mode, until := hget(h, hdrLockMode), hget(h, hdrLockUntil)
	if (mode == "") != (until == "") {
		return k, errLockHeadersIncomplete
	}
	if mode != "" {
		if mode != objects.LockGovernance && mode != objects.LockCompliance {
			return k, errLockBadMode
		}
		t, err := parseLockDate(until)
		if err != nil {
			return k, err
		}
		if !t.After(time.Now()) {
			return k, errLockBadDate
		}
		if !s.allowed(req, actionPutRetain, req.bucket, req.key, nil) {
			return k, errAccessDenied
		}
		k.Mode, k.RetainUntil = mode, t
	}
	if hold := hget(h, hdrLegalHold); hold != "" {
		if hold != objects.LegalHoldOn && hold != objects.LegalHoldOff {
			return k, errLockBadHold
		}
		if !s.allowed(req, actionPutHold, req.bucket, req.key, nil) {
			return k, errAccessDenied
		}
		k.LegalHold = hold
	}
	return k, nil
}

// setLockHeaders writes a version's lock on a GET or HEAD answer.
func setLockHeaders(h http.Header, v *objects.Version) {
	if v.LockMode != "" {
		h.Set(hdrLockMode, v.LockMode)
		h.Set(hdrLockUntil, time.Unix(0, v.RetainUntil).UTC().Format(lockDateLayoutOut))
	}
	if v.LegalHold != "" {
		h.Set(hdrLegalHold, v.LegalHold)
	}
}

// bypassGovernance reports whether a request asks to bypass governance
// retention on bucket/key and may: x-amz-bypass-governance-retention: true
// from a caller allowed s3:BypassGovernanceRetention. A caller that asks
// without the permission is treated as not asking, so a governance lock
// refuses it (AccessDenied) while an unlocked version is still removed.
func (s *Server) bypassGovernance(req *request, key string) bool {
	return isTrue(req.r.Header.Get(hdrBypass)) && s.allowed(req, actionBypass, req.bucket, key, nil)
}

func (s *Server) getObjectRetention(req *request) error {
	v, err := s.obj.ObjectLockOf(req.ctx, req.bucket, req.key, req.query.Get("versionId"))
	if err != nil {
		return err
	}
	if v.LockMode == "" {
		return objects.ErrNoObjectLock
	}
	writeXML(req.w, http.StatusOK, retentionXML{NS: s3NS, Mode: v.LockMode,
		RetainUntilDate: time.Unix(0, v.RetainUntil).UTC().Format(lockDateLayoutOut)})
	return nil
}

func (s *Server) putObjectRetention(req *request) error {
	var in retentionXML
	if err := decodeXML(req.r.Body, &in); err != nil {
		return err
	}
	var r objects.Retention
	switch {
	case in.Mode == "" && in.RetainUntilDate == "":
		// An empty retention removes it (governance with bypass, or expired).
	case in.Mode != objects.LockGovernance && in.Mode != objects.LockCompliance:
		return errLockMalformed
	default:
		t, err := parseLockDate(in.RetainUntilDate)
		if err != nil {
			return errLockMalformed
		}
		if !t.After(time.Now()) {
			return errLockBadDate
		}
		r = objects.Retention{Mode: in.Mode, RetainUntil: t}
	}
	v, err := s.obj.SetObjectRetention(req.ctx, req.bucket, req.key, req.query.Get("versionId"), r,
		objects.SetRetentionOptions{BypassGovernance: s.bypassGovernance(req, req.key)})
	if err != nil {
		return err
	}
	if !v.IsNull() {
		setVersionHeader(req.w.Header(), v.VersionID)
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) getObjectLegalHold(req *request) error {
	v, err := s.obj.ObjectLockOf(req.ctx, req.bucket, req.key, req.query.Get("versionId"))
	if err != nil {
		return err
	}
	if v.LegalHold == "" {
		return objects.ErrNoObjectLock
	}
	writeXML(req.w, http.StatusOK, legalHoldXML{NS: s3NS, Status: v.LegalHold})
	return nil
}

func (s *Server) putObjectLegalHold(req *request) error {
	var in legalHoldXML
	if err := decodeXML(req.r.Body, &in); err != nil {
		return err
	}
	if in.Status != objects.LegalHoldOn && in.Status != objects.LegalHoldOff {
		return errLockMalformed
	}
	v, err := s.obj.SetObjectLegalHold(req.ctx, req.bucket, req.key, req.query.Get("versionId"), in.Status == objects.LegalHoldOn)
	if err != nil {
		return err
	}
	if !v.IsNull() {
		setVersionHeader(req.w.Header(), v.VersionID)
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}
