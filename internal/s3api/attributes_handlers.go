package s3api

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/objects"
)

// getBucketPolicyStatus answers whether the bucket policy makes the bucket
// public (policy.IsPublic); a bucket without a policy is not public (as
// MinIO answers and the conformance suite expects).
func (s *Server) getBucketPolicyStatus(req *request) error {
	b, err := s.obj.Bucket(req.ctx, req.bucket)
	if err != nil {
		return err
	}
	public := false
	if len(b.Policy) > 0 {
		p, err := policy.ParseBucket(b.Policy)
		if err != nil {
			return err
		}
		public = p.IsPublic()
	}
	writeXML(req.w, http.StatusOK, policyStatus{NS: s3NS, IsPublic: public})
	return nil
}

type policyStatus struct {
	XMLName  xml.Name `xml:"PolicyStatus"`
	NS       string   `xml:"xmlns,attr"`
	IsPublic bool     `xml:"IsPublic"`
}

// objectAttributes are the names x-amz-object-attributes may list.
var objectAttributes = map[string]bool{"ETag": true, "Checksum": true, "ObjectParts": true, "StorageClass": true, "ObjectSize": true}

// getObjectAttributes answers GetObjectAttributes: the attributes named in
// x-amz-object-attributes, and for a multipart object its parts, paged by
// x-amz-max-parts and x-amz-part-number-marker.
func (s *Server) getObjectAttributes(req *request) error {
	want, err := requestedAttributes(req.r.Header)
	if err != nil {
		return err
	}
	maxParts, marker, err := partPaging(req.r.Header)
	if err != nil {
		return err
	}
	v, err := s.lookupForRead(req)
	if err != nil {
		return err
	}
	ck, err := s.customerKey(req, ssecPrefix)
	if err != nil {
		return err
	}
	if err := objects.CheckCustomerKey(v, ck); err != nil {
		return err
	}
	h := req.w.Header()
	h.Set("Last-Modified", v.LastModified().Format(http.TimeFormat))
	if !v.IsNull() {
		setVersionHeader(h, v.VersionID)
	}
	out := objectAttributesResult{NS: s3NS}
	if want["ETag"] {
		out.ETag = v.ETag
	}
	if want["StorageClass"] {
		out.StorageClass = storageClass(v.Listed())
	}
	if want["ObjectSize"] {
		out.ObjectSize = &v.Size
	}
	if want["Checksum"] && len(v.Checksums) > 0 {
		// S3 answers a COMPOSITE checksum here without its -N part count
		// (ObjectParts has the count), unlike HEAD and GET.
		c := &attributesChecksum{}
		sums := make(map[string]string, len(v.Checksums))
		for alg, val := range v.Checksums {
			c.Type = string(objects.ChecksumTypeOf(val))
			sums[alg], _, _ = strings.Cut(val, "-")
		}
		c.set(sums)
		out.Checksum = c
	}
	if want["ObjectParts"] && v.Multipart {
		out.ObjectParts = objectParts(v, maxParts, marker)
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func requestedAttributes(h http.Header) (map[string]bool, error) {
	want := map[string]bool{}
	for _, line := range h.Values("x-amz-object-attributes") {
		for _, a := range strings.Split(line, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				continue
			}
			if !objectAttributes[a] {
				return nil, apiErr("InvalidArgument", http.StatusBadRequest, "Invalid attribute name specified.")
			}
			want[a] = true
		}
	}
	if len(want) == 0 {
		return nil, apiErr("InvalidArgument", http.StatusBadRequest, "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty.")
	}
	return want, nil
}

// partPaging reads x-amz-max-parts (default and cap 1000) and
// x-amz-part-number-marker.
func partPaging(h http.Header) (int, int, error) {
	maxParts, marker := maxListKeys, 0
	if v := h.Get("x-amz-max-parts"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, apiErr("InvalidArgument", http.StatusBadRequest, "Argument max-parts must be an integer between 0 and 2147483647.")
		}
		maxParts = min(n, maxListKeys)
	}
	if v := h.Get("x-amz-part-number-marker"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, apiErr("InvalidArgument", http.StatusBadRequest, "Argument part-number-marker must be an integer between 0 and 2147483647.")
		}
		marker = n
	}
	return maxParts, marker, nil
}

// objectParts pages the parts of a multipart object after marker.
func objectParts(v *objects.Version, maxParts, marker int) *attributesParts {
	p := &attributesParts{PartsCount: len(v.Segments), MaxParts: maxParts, PartNumberMarker: marker}
	for _, seg := range v.Segments {
		if seg.Number <= marker {
			continue
		}
		if len(p.Parts) == maxParts {
			p.IsTruncated = true
			break
		}
		e := attributesPart{PartNumber: seg.Number, Size: seg.Size}
		e.set(seg.Checksum)
		p.Parts = append(p.Parts, e)
		p.NextPartNumberMarker = seg.Number
	}
	return p
}

type objectAttributesResult struct {
	XMLName      xml.Name            `xml:"GetObjectAttributesResponse"`
	NS           string              `xml:"xmlns,attr"`
	ETag         string              `xml:"ETag,omitempty"`
	Checksum     *attributesChecksum `xml:"Checksum,omitempty"`
	ObjectParts  *attributesParts    `xml:"ObjectParts,omitempty"`
	StorageClass string              `xml:"StorageClass,omitempty"`
	ObjectSize   *int64              `xml:"ObjectSize,omitempty"`
}

type attributesChecksum struct {
	checksumFields
	Type string `xml:"ChecksumType,omitempty"`
}

type attributesParts struct {
	IsTruncated          bool             `xml:"IsTruncated"`
	MaxParts             int              `xml:"MaxParts"`
	NextPartNumberMarker int              `xml:"NextPartNumberMarker"`
	PartNumberMarker     int              `xml:"PartNumberMarker"`
	Parts                []attributesPart `xml:"Part"`
	PartsCount           int              `xml:"PartsCount"`
}

type attributesPart struct {
	checksumFields
	PartNumber int   `xml:"PartNumber"`
	Size       int64 `xml:"Size"`
}
