package s3api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/objects"
)

// maxPartSize is the largest part S3 accepts.
const maxPartSize = 5 << 30

func (s *Server) createMultipartUpload(req *request) error {
	opts, err := s.putOptions(req)
	if err != nil {
		return err
	}
	if alg := req.r.Header.Get("x-amz-checksum-algorithm"); alg != "" {
		a, err := checksum.ParseAlgorithm(alg)
		if err != nil {
			return err
		}
		opts.Checksum = a
	}
	if t := req.r.Header.Get(checksum.HeaderType); t != "" {
		if opts.ChecksumType, err = checksum.ParseType(t); err != nil {
			return err
		}
	}
	u, err := s.obj.CreateMultipartUpload(req.ctx, req.bucket, req.key, opts)
	if err != nil {
		return err
	}
	if u.SSE != "" {
		req.w.Header().Set("x-amz-server-side-encryption", u.SSE)
	}
	setCustomerKeyHeaders(req.w.Header(), &objects.Version{KeyCheck: u.KeyCheck}, opts.CustomerKey)
	if u.Checksum != "" {
		req.w.Header().Set("x-amz-checksum-algorithm", string(u.Checksum))
		req.w.Header().Set(checksum.HeaderType, string(u.ObjectChecksumType()))
	}
	writeXML(req.w, http.StatusOK, initiateMultipartUploadResult{NS: s3NS, Bucket: req.bucket, Key: req.key, UploadID: u.UploadID})
	return nil
}

func partNumber(req *request) (int, error) {
	n, err := strconv.Atoi(req.query.Get("partNumber"))
	if err != nil || n < 1 || n > objects.MaxPartNumber {
		return 0, errInvalidPartNumber
	}
	return n, nil
}

func (s *Server) uploadPart(req *request) error {
	n, err := partNumber(req)
	if err != nil {
		return err
	}
	if req.r.Header.Get("x-amz-copy-source") != "" {
		req.api = "UploadPartCopy"
		return s.uploadPartCopy(req, n)
	}
	ck, err := s.customerKey(req, ssecPrefix)
	if err != nil {
		return err
	}
	declared, err := checksum.FromHeaders(req.r.Header)
	if err != nil {
		return err
	}
	body, size, err := s.payload(req, maxPartSize)
	if err != nil {
		return err
	}
	opts := objects.PutOptions{Size: size, Checksum: declared.Algorithm, Verify: s.verifyFunc(req, declared), CustomerKey: ck}
	p, err := s.obj.UploadPart(req.ctx, req.bucket, req.key, req.query.Get("uploadId"), n, body, opts)
	if err != nil {
		return err
	}
	req.w.Header().Set("ETag", `"`+p.Segment.ETag+`"`)
	s.setPartEncryptionHeaders(req, ck)
	setChecksumHeaders(req.w.Header(), p.Segment.Checksum)
	req.w.Header().Del("x-amz-checksum-type")
	req.w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) uploadPartCopy(req *request, n int) error {
	sb, sk, sv, err := copySource(req.r.Header)
	if err != nil {
		return err
	}
	src, err := s.obj.HeadObject(req.ctx, sb, sk, sv)
	if err != nil {
		return err
	}
	srcKey, err := s.customerKey(req, ssecCopyPrefix)
	if err != nil {
		return err
	}
	dstKey, err := s.customerKey(req, ssecPrefix)
	if err != nil {
		return err
	}
	if err := objects.CheckCustomerKey(src, srcKey); err != nil {
		return err
	}
	if err := checkCopyConditions(req.r.Header, src); err != nil {
		return err
	}
	rng := byteRange{0, src.Size}
	if h := req.r.Header.Get("x-amz-copy-source-range"); h != "" {
		if rng, err = parseCopyRange(h, src.Size); err != nil {
			return err
		}
	}
	rd, err := s.obj.OpenRangeWithKey(sb, sk, src, rng.start, rng.length, srcKey)
	if err != nil {
		return err
	}
	defer rd.Close()
	p, err := s.obj.UploadPart(req.ctx, req.bucket, req.key, req.query.Get("uploadId"), n, rd, objects.PutOptions{Size: rng.length, CustomerKey: dstKey})
	if err != nil {
		return err
	}
	if src.VersionID != objects.NullVersionID || sv != "" {
		req.w.Header().Set("x-amz-copy-source-version-id", src.VersionID)
	}
	s.setPartEncryptionHeaders(req, dstKey)
	writeXML(req.w, http.StatusOK, copyPartResult{NS: s3NS, LastModified: isoTime(p.Modified.UnixNano()), ETag: `"` + p.Segment.ETag + `"`})
	return nil
}

// setPartEncryptionHeaders reports how a part just stored is encrypted,
// as S3 does on UploadPart and UploadPartCopy: SSE-S3, or SSE-C with the
// MD5 of the key the request sent.
func (s *Server) setPartEncryptionHeaders(req *request, ck []byte) {
	u, err := s.obj.GetUpload(req.ctx, req.bucket, req.key, req.query.Get("uploadId"))
	if err != nil {
		return // completed or aborted meanwhile; the part's answer stands
	}
	if u.SSE != "" {
		req.w.Header().Set("x-amz-server-side-encryption", u.SSE)
	}
	setCustomerKeyHeaders(req.w.Header(), &objects.Version{KeyCheck: u.KeyCheck}, ck)
}

// completeChecksum returns the object checksum sent with
// CompleteMultipartUpload in the upload's algorithm, which the object
// layer holds against the one it forms from the parts: a value that is no
// digest at all is BadDigest, and a checksum type other than the
// upload's is refused.
func completeChecksum(h http.Header, u *objects.Upload) (string, error) {
	if t := h.Get(checksum.HeaderType); t != "" && u.UploadID != "" {
		typ, err := checksum.ParseType(t)
		if err != nil {
			return "", err
		}
		if want := u.ObjectChecksumType(); typ != want {
			return "", fmt.Errorf("%w: the upload was created with the %q checksum type, not %s", checksum.ErrUnsupportedType, want, typ)
		}
	}
	alg := u.Checksum
	if alg == "" {
		return "", nil
	}
	sent := h.Get(alg.HeaderName())
	digest, _, _ := strings.Cut(sent, "-")
	if sent != "" {
		if _, err := alg.Decode(digest); err != nil {
			return "", fmt.Errorf("%w: malformed %s", checksum.ErrBadDigest, alg.HeaderName())
		}
	}
	return sent, nil
}

// parseCopyRange parses x-amz-copy-source-range, bytes=first-last, which
// unlike a GET's Range must lie wholly inside the source: a malformed one
// is InvalidArgument, one reaching past the source's end InvalidRange.
func parseCopyRange(h string, size int64) (byteRange, error) {
	spec, ok := strings.CutPrefix(h, "bytes=")
	a, b, found := strings.Cut(spec, "-")
	if !ok || !found || a == "" || b == "" {
		return byteRange{}, errInvalidRangeCopy
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return byteRange{}, errInvalidRangeCopy
	}
	if last >= size {
		return byteRange{}, errInvalidRange(size)
	}
	return byteRange{first, last - first + 1}, nil
}

func (s *Server) completeMultipartUpload(req *request) error {
	var body completeMultipartUpload
	if err := decodeXML(req.r.Body, &body); err != nil {
		return err
	}
	uploadID := req.query.Get("uploadId")
	u, err := s.obj.GetUpload(req.ctx, req.bucket, req.key, uploadID)
	switch {
	case errors.Is(err, objects.ErrUploadNotFound):
		u = &objects.Upload{} // maybe completed already: the object layer answers a retry
	case err != nil:
		return err
	}
	parts := make([]objects.CompletePart, 0, len(body.Parts))
	for _, p := range body.Parts {
		parts = append(parts, objects.CompletePart{Number: p.PartNumber, ETag: p.ETag, Checksum: p.get(string(u.Checksum))})
	}
	// S3 does not require an SSE-C upload's key to complete it, but a key
	// sent must be the upload's: never accepted and ignored.
	ck, err := s.customerKey(req, ssecPrefix)
	if err != nil {
		return err
	}
	if ck != nil && u.UploadID != "" {
		if err := objects.CheckCustomerKey(&objects.Version{KeyCheck: u.KeyCheck}, ck); err != nil {
			return err
		}
	}
	sent, err := completeChecksum(req.r.Header, u)
	if err != nil {
		return err
	}
	cond := objects.PutOptions{IfMatch: req.r.Header.Get("If-Match"), IfNoneMatch: req.r.Header.Get("If-None-Match"), ObjectChecksum: sent}
	v, err := s.obj.CompleteMultipartUpload(req.ctx, req.bucket, req.key, uploadID, parts, cond)
	if err != nil {
		return err
	}
	s.setWriteVersionHeader(req, v)
	if v.SSE != "" {
		req.w.Header().Set("x-amz-server-side-encryption", v.SSE)
	}
	setCustomerKeyHeaders(req.w.Header(), v, nil)
	res := completeMultipartUploadResult{NS: s3NS, Location: "/" + req.bucket + "/" + req.key, Bucket: req.bucket, Key: req.key, ETag: `"` + v.ETag + `"`}
	res.set(v.Checksums)
	for _, val := range v.Checksums {
		res.ChecksumType = string(objects.ChecksumTypeOf(val))
	}
	writeXML(req.w, http.StatusOK, res)
	return nil
}

func (s *Server) abortMultipartUpload(req *request) error {
	if err := s.obj.AbortMultipartUpload(req.ctx, req.bucket, req.key, req.query.Get("uploadId")); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listParts(req *request) error {
	max, err := maxKeys(req.query, "max-parts")
	if err != nil {
		return err
	}
	marker, _ := strconv.Atoi(req.query.Get("part-number-marker"))
	uploadID := req.query.Get("uploadId")
	u, err := s.obj.GetUpload(req.ctx, req.bucket, req.key, uploadID)
	if err != nil {
		return err
	}
	parts, truncated, err := s.obj.ListParts(req.ctx, req.bucket, req.key, uploadID, marker, max)
	if err != nil {
		return err
	}
	out := listPartsResult{
		NS: s3NS, Bucket: req.bucket, Key: req.key, UploadID: uploadID, PartNumberMarker: marker,
		MaxParts: max, IsTruncated: truncated, StorageClass: "STANDARD", ChecksumAlgorithm: string(u.Checksum),
		Initiator: siteOwner, Owner: siteOwner,
	}
	for _, p := range parts {
		e := partEntry{PartNumber: p.Number, LastModified: isoTime(p.Modified.UnixNano()), ETag: `"` + p.Segment.ETag + `"`, Size: p.Segment.Size}
		e.set(p.Segment.Checksum)
		out.Parts = append(out.Parts, e)
		out.NextPartNumberMarker = p.Number
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func (s *Server) listMultipartUploads(req *request) error {
	q := req.query
	enc, err := newEncoder(q)
	if err != nil {
		return err
	}
	max, err := maxKeys(q, "max-uploads")
	if err != nil {
		return err
	}
	opts := objects.UploadListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker"), MaxUploads: max}
	res, err := s.obj.ListMultipartUploads(req.ctx, req.bucket, opts)
	if err != nil {
		return err
	}
	out := listUploadsResult{
		NS: s3NS, Bucket: req.bucket, KeyMarker: enc.enc(opts.KeyMarker), UploadIDMarker: opts.UploadIDMarker,
		Prefix: enc.enc(opts.Prefix), Delimiter: enc.enc(opts.Delimiter), MaxUploads: max, IsTruncated: res.IsTruncated,
		EncodingType: enc.typeName(), CommonPrefixes: prefixEntries(res.CommonPrefixes, enc),
	}
	if res.IsTruncated {
		out.NextKeyMarker, out.NextUploadIDMarker = enc.enc(res.NextKeyMarker), res.NextUploadIDMarker
	}
	for _, u := range res.Uploads {
		out.Uploads = append(out.Uploads, uploadEntry{Key: enc.enc(u.Key), UploadID: u.UploadID, Initiated: isoTime(u.Initiated.UnixNano()), StorageClass: "STANDARD", Initiator: siteOwner, Owner: siteOwner})
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}
