package s3api

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twinlake/twinlake/internal/checksum"
	"github.com/twinlake/twinlake/internal/objects"
)

// storedHeaders are the standard headers kept with an object and returned
// on GET and HEAD.
var storedHeaders = []string{"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires"}

// reducedRedundancy is the one storage class besides STANDARD that a
// write may name (MinIO's two); it is kept among the object's headers,
// under storageClassHeader.
const (
	reducedRedundancy  = "REDUCED_REDUNDANCY"
	storageClassHeader = objects.HeaderStorageClass
)

// responseOverrides are the GET query parameters that override headers.
var responseOverrides = map[string]string{
	"response-content-type":        "Content-Type",
	"response-content-language":    "Content-Language",
	"response-expires":             "Expires",
	"response-cache-control":       "Cache-Control",
	"response-content-disposition": "Content-Disposition",
	"response-content-encoding":    "Content-Encoding",
}

const maxUserMetaSize = 2 << 10

// putOptionsFromHeaders reads object metadata from request headers.
func putOptionsFromHeaders(h http.Header) (objects.PutOptions, error) {
	opts := objects.PutOptions{ContentType: hget(h, "Content-Type")}
	if opts.ContentType == "" {
		opts.ContentType = "binary/octet-stream"
	}
	size := 0
	for name, vals := range h {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-meta-") {
			if opts.UserMeta == nil {
				opts.UserMeta = map[string]string{}
			}
			k := strings.TrimPrefix(lower, "x-amz-meta-")
			v := strings.Join(vals, ",")
			opts.UserMeta[k] = v
			size += len(k) + len(v)
		}
	}
	if size > maxUserMetaSize {
		return opts, apiErr("MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size.")
	}
	for _, name := range storedHeaders {
		if v := hget(h, name); v != "" {
			if opts.Headers == nil {
				opts.Headers = map[string]string{}
			}
			opts.Headers[name] = v
		}
	}
	if enc := opts.Headers["Content-Encoding"]; enc != "" {
		// aws-chunked is transfer framing, not a property of the object.
		var kept []string
		for _, e := range strings.Split(enc, ",") {
			if e = strings.TrimSpace(e); e != "" && e != "aws-chunked" {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(opts.Headers, "Content-Encoding")
		} else {
			opts.Headers["Content-Encoding"] = strings.Join(kept, ", ")
		}
	}
	if err := checkKMSHeaders(h); err != nil {
		return opts, err
	}
	if sse := hget(h, "x-amz-server-side-encryption"); sse != "" {
		if sse == "aws:kms" || sse == "aws:kms:dsse" {
			return opts, errKMSUnsupported
		}
		if sse != objects.SSEAlgorithm {
			return opts, apiErr("InvalidArgument", 400, "The encryption method specified is not supported.")
		}
		opts.SSE = sse
	}
	switch sc := hget(h, "x-amz-storage-class"); sc {
	case "", "STANDARD":
	case reducedRedundancy:
		// Kept and answered as MinIO does, the object stored with the
		// site's full redundancy all the same: never less than asked.
		if opts.Headers == nil {
			opts.Headers = map[string]string{}
		}
		opts.Headers[storageClassHeader] = sc
	default:
		return opts, errInvalidStorageClass
	}
	if t := hget(h, "x-amz-tagging"); t != "" {
		tags, err := parseTagQuery(t)
		if err != nil {
			return opts, err
		}
		opts.Tags = tags
	}
	opts.IfMatch = hget(h, "If-Match")
	opts.IfNoneMatch = hget(h, "If-None-Match")
	return opts, nil
}

// parseTagQuery reads x-amz-tagging: URL-encoded key=value pairs joined
// by '&' ("a=1&b" is a=1 and b=""), under the same rules as a Tagging
// document; a repeated key is InvalidTag.
func parseTagQuery(s string) (map[string]string, error) {
	var kv [][2]string
	for pair := range strings.SplitSeq(s, "&") {
		if pair == "" {
			continue
		}
		rk, rv, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(rk)
		v, err2 := url.QueryUnescape(rv)
		if err1 != nil || err2 != nil {
			return nil, apiErr("InvalidArgument", http.StatusBadRequest, "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
		}
		kv = append(kv, [2]string{k, v})
	}
	return checkTags(kv, maxObjectTags)
}

// setObjectHeaders writes the headers describing v.
func setObjectHeaders(h http.Header, v *objects.Version, withChecksum bool) {
	h.Set("ETag", `"`+v.ETag+`"`)
	h.Set("Last-Modified", v.LastModified().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	if v.ContentType != "" {
		h.Set("Content-Type", v.ContentType)
	}
	for k, val := range v.Headers {
		h.Set(k, val)
	}
	for k, val := range v.UserMeta {
		// Stored lower-case, sent as S3 sends them: x-amz-meta-<key> as
		// is, not canonicalised (which would read back Foo for foo).
		h["x-amz-meta-"+k] = []string{val}
	}
	if !v.IsNull() {
		setVersionHeader(h, v.VersionID)
	}
	if v.SSE != "" {
		h.Set("x-amz-server-side-encryption", v.SSE)
	}
	if len(v.Tags) > 0 {
		h.Set("x-amz-tagging-count", strconv.Itoa(len(v.Tags)))
	}
	if withChecksum {
		setChecksumHeaders(h, v.Checksums)
	}
	setReplicationHeaders(h, v)
	setLockHeaders(h, v)
}

func setChecksumHeaders(h http.Header, sums map[string]string) {
	for alg, val := range sums {
		setChecksumHeader(h, alg, val)
		hset(h, checksum.HeaderType, string(objects.ChecksumTypeOf(val)))
	}
}

// setChecksumHeader sets x-amz-checksum-<alg> to val.
func setChecksumHeader(h http.Header, alg, val string) {
	if a := checksum.Algorithm(alg); a.Valid() {
		hset(h, a.HeaderName(), val) // one of a few names: its canonical form is kept
		return
	}
	h.Set("x-amz-checksum-"+strings.ToLower(alg), val)
}

// setPartChecksumHeaders reports, for a read of one part of v, that
// part's own checksum as its upload stored it, as S3 does, with the type
// of the object's.
func setPartChecksumHeaders(h http.Header, v *objects.Version, part *objects.Segment) {
	for alg, val := range part.Checksum {
		if _, ok := v.Checksums[alg]; !ok {
			continue
		}
		setChecksumHeader(h, alg, val)
		hset(h, checksum.HeaderType, string(objects.ChecksumTypeOf(v.Checksums[alg])))
	}
}

// setReplicationHeaders reports a version's site replication state: the
// S3 status header, and twinlake's own headers for the per-target map,
// the origin site, the hybrid-logical-clock time and the timestamps.
func setReplicationHeaders(h http.Header, v *objects.Version) {
	if st := v.ReplicationStatus(); st != "" {
		h.Set("x-amz-replication-status", st)
	}
	if len(v.Targets) > 0 {
		ids := make([]string, 0, len(v.Targets))
		for id := range v.Targets {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = id + "=" + v.Targets[id]
		}
		h.Set("X-Twinlake-Replication-Targets", strings.Join(parts, ","))
	}
	if v.Origin != "" {
		h.Set("X-Twinlake-Origin", v.Origin)
	}
	h.Set("X-Twinlake-Mod-Time", strconv.FormatInt(v.ModTime, 10))
	for name, ts := range map[string]int64{"X-Twinlake-Replica-Timestamp": v.ReplicaTimestamp, "X-Twinlake-Replication-Activity": v.ActivityTimestamp} {
		if ts != 0 {
			h.Set(name, time.Unix(0, ts).UTC().Format(time.RFC3339Nano))
		}
	}
}

func setVersionHeader(h http.Header, id string) {
	if id != "" {
		h.Set("x-amz-version-id", id)
	}
}

// checkReadConditions evaluates If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since for GET and HEAD. It returns 304 or 412 as an error.
func checkReadConditions(h http.Header, v *objects.Version) error {
	etag := v.ETag
	mod := v.LastModified().Truncate(time.Second)
	if im := h.Get("If-Match"); im != "" {
		if !objects.ETagMatches(im, etag) {
			return errPreconditionFailed
		}
	} else if ius := h.Get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && mod.After(t) {
			return errPreconditionFailed
		}
	}
	if inm := h.Get("If-None-Match"); inm != "" {
		if objects.ETagMatches(inm, etag) {
			return errNotModified
		}
	} else if ims := h.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !mod.After(t) {
			return errNotModified
		}
	}
	return nil
}

var errNotModified = &APIError{Code: "NotModified", Message: "Not Modified", Status: http.StatusNotModified}

// byteRange is a parsed Range header.
type byteRange struct{ start, length int64 }

// parseRange parses "bytes=a-b", "bytes=a-" or "bytes=-n" against size. ok is
// false when the header should be ignored (absent, malformed or
// multi-range), as S3 serves the whole object then.
func parseRange(h string, size int64) (r byteRange, ok bool, err error) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return r, false, nil
	}
	a, b, found := strings.Cut(spec, "-")
	if !found {
		return r, false, nil
	}
	switch {
	case a == "":
		n, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || n < 0 {
			return r, false, nil
		}
		if n == 0 {
			return r, false, errInvalidRange(size)
		}
		n = min(n, size)
		return byteRange{size - n, n}, true, nil
	default:
		start, perr := strconv.ParseInt(a, 10, 64)
		if perr != nil || start < 0 {
			return r, false, nil
		}
		end := size - 1
		if b != "" {
			e, perr := strconv.ParseInt(b, 10, 64)
			if perr != nil || e < start {
				return r, false, nil
			}
			end = min(e, size-1)
		}
		if start >= size {
			return r, false, errInvalidRange(size)
		}
		return byteRange{start, end - start + 1}, true, nil
	}
}

func errInvalidRange(size int64) error {
	return &rangeError{size: size}
}

// rangeError carries the object size for the Content-Range of a 416.
type rangeError struct{ size int64 }

func (e *rangeError) Error() string { return "invalid range" }
func (e *rangeError) Unwrap() error { return objects.ErrInvalidRange }
