package s3api

import (
	"encoding/xml"
	"net/http"
)

// Bucket settings twinlake does not keep, read as AWS S3 answers for a
// bucket that has none of them, so that SDKs and tools which read every
// setting of a bucket (the AWS CLI, infrastructure-as-code providers) get
// an answer they know instead of NotImplemented. Setting them stays
// NotImplemented (unsupported.go).

// errNoSuchWebsite answers GetBucketWebsite: no bucket serves a website.
var errNoSuchWebsite = apiErr("NoSuchWebsiteConfiguration", http.StatusNotFound,
	"The specified bucket does not have a website configuration")

// errNoSuchPublicAccessBlock answers GetPublicAccessBlock: access is
// governed by bucket policies and ACLs alone.
var errNoSuchPublicAccessBlock = apiErr("NoSuchPublicAccessBlockConfiguration", http.StatusNotFound,
	"The public access block configuration was not found")

// errNoSuchOwnershipControls answers GetBucketOwnershipControls: no
// bucket has them; every object belongs to the bucket's owner, the site,
// and canned ACLs stay in force (see acl.go).
var errNoSuchOwnershipControls = apiErr("OwnershipControlsNotFoundError", http.StatusNotFound,
	"The bucket ownership controls were not found")

type accelerateConfiguration struct {
	XMLName xml.Name `xml:"AccelerateConfiguration"`
	NS      string   `xml:"xmlns,attr"`
}

type requestPaymentConfiguration struct {
	XMLName xml.Name `xml:"RequestPaymentConfiguration"`
	NS      string   `xml:"xmlns,attr"`
	Payer   string   `xml:"Payer"`
}

type bucketLoggingStatus struct {
	XMLName xml.Name `xml:"BucketLoggingStatus"`
	NS      string   `xml:"xmlns,attr"`
}

type notificationConfiguration struct {
	XMLName xml.Name `xml:"NotificationConfiguration"`
	NS      string   `xml:"xmlns,attr"`
}

// absentSetting answers a read of a bucket setting twinlake does not keep:
// NoSuchBucket for a missing bucket, else body (XML) or err.
func (s *Server) absentSetting(req *request, body any, err error) error {
	if _, berr := s.obj.Bucket(req.ctx, req.bucket); berr != nil {
		return berr
	}
	if err != nil {
		return err
	}
	writeXML(req.w, http.StatusOK, body)
	return nil
}

func (s *Server) getBucketWebsite(req *request) error {
	return s.absentSetting(req, nil, errNoSuchWebsite)
}

func (s *Server) getPublicAccessBlock(req *request) error {
	return s.absentSetting(req, nil, errNoSuchPublicAccessBlock)
}

func (s *Server) getBucketOwnershipControls(req *request) error {
	return s.absentSetting(req, nil, errNoSuchOwnershipControls)
}

// getBucketAccelerate: transfer acceleration was never enabled (no Status).
func (s *Server) getBucketAccelerate(req *request) error {
	return s.absentSetting(req, accelerateConfiguration{NS: s3NS}, nil)
}

// getBucketRequestPayment: the bucket owner pays, as for every bucket.
func (s *Server) getBucketRequestPayment(req *request) error {
	return s.absentSetting(req, requestPaymentConfiguration{NS: s3NS, Payer: "BucketOwner"}, nil)
}

// getBucketLogging: server access logging is off (the site's access log
// is the operator's, admin trace).
func (s *Server) getBucketLogging(req *request) error {
	return s.absentSetting(req, bucketLoggingStatus{NS: s3NS}, nil)
}

// getBucketNotification: no notification targets.
func (s *Server) getBucketNotification(req *request) error {
	return s.absentSetting(req, notificationConfiguration{NS: s3NS}, nil)
}
