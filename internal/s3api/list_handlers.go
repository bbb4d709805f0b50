package s3api

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/twinlake/twinlake/internal/objects"
)

const maxListKeys = 1000

// maxKeys parses a max-keys style parameter, capped at 1000.
func maxKeys(q url.Values, name string) (int, error) {
	v := q.Get(name)
	if v == "" {
		return maxListKeys, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errInvalidMaxKeys
	}
	return min(n, maxListKeys), nil
}

// encodeToken makes the continuation token of a listing (objects or
// buckets) that goes on after the name after.
func encodeToken(after string) string { return base64.RawURLEncoding.EncodeToString([]byte(after)) }

// decodeToken reads a continuation token encodeToken made.
func decodeToken(token string) (string, error) {
	after, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", errInvalidToken
	}
	return string(after), nil
}

// encoder applies encoding-type=url to keys and prefixes in a response.
type encoder bool

func newEncoder(q url.Values) (encoder, error) {
	switch q.Get("encoding-type") {
	case "":
		return false, nil
	case "url":
		return true, nil
	}
	return false, errInvalidEncodingType
}

// enc percent-encodes every byte but the unreserved ones and '/', as S3
// does: a delimiter of "/" comes back "/", a space "%20", a '+' "%2B".
func (e encoder) enc(s string) string {
	if !e || s == "" {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func (e encoder) typeName() string {
	if e {
		return "url"
	}
	return ""
}

func (s *Server) listObjects(req *request) error {
	q := req.query
	enc, err := newEncoder(q)
	if err != nil {
		return err
	}
	max, err := maxKeys(q, "max-keys")
	if err != nil {
		return err
	}
	opts := objects.ListOptions{Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), MaxKeys: max}
	if q.Get("list-type") == "2" {
		req.api = "ListObjectsV2"
		return s.listObjectsV2(req, opts, enc)
	}
	opts.After = q.Get("marker")
	res, err := s.obj.ListObjects(req.ctx, req.bucket, opts)
	if err != nil {
		return err
	}
	entries := xmlBuffer()
	defer releaseXML(entries)
	listEntries(entries, objectEntries(res.Objects, enc, true), prefixEntries(res.CommonPrefixes, enc))
	out := listObjectsV1Result{
		NS: s3NS, Name: req.bucket, Prefix: enc.enc(opts.Prefix), Marker: enc.enc(opts.After),
		Delimiter: enc.enc(opts.Delimiter), MaxKeys: max, EncodingType: enc.typeName(), IsTruncated: res.IsTruncated,
		Entries: entries.Bytes(),
	}
	if res.IsTruncated {
		out.NextMarker = enc.enc(res.NextAfter)
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func (s *Server) listObjectsV2(req *request, opts objects.ListOptions, enc encoder) error {
	q := req.query
	token := q.Get("continuation-token")
	opts.After = q.Get("start-after")
	if token != "" {
		// An empty token starts from the beginning, as MinIO and the
		// conformance suite have it.
		after, err := decodeToken(token)
		if err != nil {
			return err
		}
		opts.After = after
	}
	res, err := s.obj.ListObjects(req.ctx, req.bucket, opts)
	if err != nil {
		return err
	}
	entries := xmlBuffer()
	defer releaseXML(entries)
	listEntries(entries, objectEntries(res.Objects, enc, q.Get("fetch-owner") == "true"), prefixEntries(res.CommonPrefixes, enc))
	out := listObjectsV2Result{
		NS: s3NS, Name: req.bucket, Prefix: enc.enc(opts.Prefix), Delimiter: enc.enc(opts.Delimiter),
		MaxKeys: opts.MaxKeys, EncodingType: enc.typeName(), IsTruncated: res.IsTruncated,
		StartAfter: enc.enc(q.Get("start-after")),
		KeyCount:   len(res.Objects) + len(res.CommonPrefixes),
		Entries:    entries.Bytes(),
	}
	if q.Has("continuation-token") {
		out.ContinuationToken = &token
	}
	if res.IsTruncated {
		out.NextContinuationToken = encodeToken(res.NextAfter)
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func objectEntries(objs []objects.ObjectInfo, enc encoder, withOwner bool) []objectEntry {
	out := make([]objectEntry, 0, len(objs))
	for _, o := range objs {
		e := objectEntry{Key: enc.enc(o.Key), LastModified: isoTime(o.ModTime), ETag: `"` + o.ETag + `"`, Size: o.Size,
			listedChecksum: listedChecksumOf(o.Listed), StorageClass: storageClass(o.Listed)}
		if withOwner {
			e.Owner = &siteOwner
		}
		out = append(out, e)
	}
	return out
}

// storageClass is the storage class a listing or GetObjectAttributes
// shows.
func storageClass(l objects.Listed) string {
	if l.StorageClass != "" {
		return l.StorageClass
	}
	return "STANDARD"
}

func listedChecksumOf(l objects.Listed) listedChecksum {
	return listedChecksum{ChecksumAlgorithm: l.ChecksumAlgorithm, ChecksumType: l.ChecksumType}
}

func prefixEntries(cps []string, enc encoder) []commonPrefix {
	out := make([]commonPrefix, 0, len(cps))
	for _, p := range cps {
		out = append(out, commonPrefix{Prefix: enc.enc(p)})
	}
	return out
}

func (s *Server) listObjectVersions(req *request) error {
	q := req.query
	enc, err := newEncoder(q)
	if err != nil {
		return err
	}
	max, err := maxKeys(q, "max-keys")
	if err != nil {
		return err
	}
	opts := objects.VersionListOptions{
		Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), KeyMarker: q.Get("key-marker"),
		VersionIDMarker: q.Get("version-id-marker"), MaxKeys: max,
	}
	if opts.VersionIDMarker != "" && opts.KeyMarker == "" {
		return apiErr("InvalidArgument", 400, "A version-id marker cannot be specified without a key marker.")
	}
	res, err := s.obj.ListObjectVersions(req.ctx, req.bucket, opts)
	if err != nil {
		return err
	}
	out := listVersionsResult{
		NS: s3NS, Name: req.bucket, Prefix: enc.enc(opts.Prefix), KeyMarker: enc.enc(opts.KeyMarker),
		VersionIDMarker: opts.VersionIDMarker, Delimiter: enc.enc(opts.Delimiter), MaxKeys: max,
		EncodingType: enc.typeName(), IsTruncated: res.IsTruncated,
	}
	if res.IsTruncated {
		out.NextKeyMarker, out.NextVersionIDMarker = enc.enc(res.NextKeyMarker), res.NextVersionIDMarker
	}
	versions := make([]any, 0, len(res.Versions))
	for _, v := range res.Versions {
		if v.DeleteMarker {
			versions = append(versions, deleteMarkerEntry{Key: enc.enc(v.Key), VersionID: v.VersionID, IsLatest: v.IsLatest, LastModified: isoTime(v.ModTime), Owner: siteOwner})
			continue
		}
		versions = append(versions, versionEntry{
			Key: enc.enc(v.Key), VersionID: v.VersionID, IsLatest: v.IsLatest, LastModified: isoTime(v.ModTime),
			ETag: `"` + v.ETag + `"`, Size: v.Size, Owner: siteOwner,
			listedChecksum: listedChecksumOf(v.Listed), StorageClass: storageClass(v.Listed),
		})
	}
	entries := xmlBuffer()
	defer releaseXML(entries)
	versionEntries(entries, versions, prefixEntries(res.CommonPrefixes, enc))
	out.Entries = entries.Bytes()
	writeXML(req.w, http.StatusOK, out)
	return nil
}
