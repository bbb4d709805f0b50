package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/sse"
)

// BucketView is one bucket in the list.
type BucketView struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// BucketsView answers GET /api/buckets: one page of the buckets the user
// may list.
type BucketsView struct {
	Buckets []BucketView `json:"buckets"`
	Total   int          `json:"total"`
	Offset  int          `json:"offset"`
}

// ObjectView is one object or common prefix in a listing.
type ObjectView struct {
	Key          string    `json:"key"`
	Prefix       bool      `json:"prefix,omitempty"`
	Size         int64     `json:"size"`
	LastModified time.Time `json:"lastModified,omitzero"`
	ETag         string    `json:"etag,omitempty"`
	VersionID    string    `json:"versionId,omitempty"`
	IsLatest     bool      `json:"isLatest,omitempty"`
	DeleteMarker bool      `json:"deleteMarker,omitempty"`
}

// ObjectsView answers GET /api/buckets/{bucket}/objects: one page.
type ObjectsView struct {
	Bucket  string       `json:"bucket"`
	Prefix  string       `json:"prefix"`
	Objects []ObjectView `json:"objects"`
	Next    string       `json:"next,omitempty"` // continuation token of the next page
}

// BucketSettings are the bucket settings the console shows and changes.
type BucketSettings struct {
	Versioning string `json:"versioning"` // Enabled, Suspended or "" (never enabled)
	Encryption string `json:"encryption"` // AES256 or ""
}

// validBucket checks a bucket name by the S3 naming rules, so no path
// trick reaches a request path.
func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("%w: bucket name length", errBadPath)
	}
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.') {
			return fmt.Errorf("%w: bucket name %q", errBadPath, b)
		}
	}
	if strings.Contains(b, "..") || b[0] == '.' || b[0] == '-' {
		return fmt.Errorf("%w: bucket name %q", errBadPath, b)
	}
	return nil
}

// validKey refuses keys the console will not handle: empty, over 1,024
// bytes, invalid UTF-8, control characters, a leading slash or a "." or
// ".." path segment.
func validKey(k string, allowEmpty bool) error {
	if k == "" {
		if allowEmpty {
			return nil
		}
		return fmt.Errorf("%w: empty key", errBadPath)
	}
	if len(k) > 1024 || !utf8.ValidString(k) || strings.HasPrefix(k, "/") {
		return fmt.Errorf("%w: key", errBadPath)
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: control character in key", errBadPath)
		}
	}
	for seg := range strings.SplitSeq(k, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("%w: %q segment in key", errBadPath, seg)
		}
	}
	return nil
}

func bucketParam(r *http.Request) (string, error) {
	b := r.PathValue("bucket")
	return b, validBucket(b)
}

func (c *Console) listBuckets(w http.ResponseWriter, r *http.Request, cl *call) error {
	offset, limit, err := page(r, 100)
	if err != nil {
		return err
	}
	all, err := cl.cl.s3.ListBuckets(cl.ctx)
	if err != nil {
		return err
	}
	v := BucketsView{Buckets: []BucketView{}, Total: len(all), Offset: offset}
	for _, b := range all[min(offset, len(all)):min(offset+limit, len(all))] {
		v.Buckets = append(v.Buckets, BucketView{Name: b.Name, Created: b.CreationDate})
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (c *Console) makeBucket(w http.ResponseWriter, r *http.Request, cl *call) error {
	var req struct {
		Name string `json:"name"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := validBucket(req.Name); err != nil {
		return err
	}
	if err := cl.cl.s3.MakeBucket(cl.ctx, req.Name, minio.MakeBucketOptions{Region: region}); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, BucketView{Name: req.Name})
	return nil
}

func (c *Console) listObjects(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	prefix := q.Get("prefix")
	if err := validKey(prefix, true); err != nil {
		return err
	}
	_, limit, err := page(r, 200)
	if err != nil {
		return err
	}
	res, err := minio.Core{Client: cl.cl.s3}.ListObjectsV2(b, prefix, "", q.Get("token"), "/", limit)
	if err != nil {
		return err
	}
	v := ObjectsView{Bucket: b, Prefix: prefix, Objects: []ObjectView{}}
	for _, p := range res.CommonPrefixes {
		v.Objects = append(v.Objects, ObjectView{Key: p.Prefix, Prefix: true})
	}
	for _, o := range res.Contents {
		v.Objects = append(v.Objects, ObjectView{Key: o.Key, Size: o.Size, LastModified: o.LastModified, ETag: strings.Trim(o.ETag, `"`)})
	}
	if res.IsTruncated {
		v.Next = res.NextContinuationToken
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (c *Console) listVersions(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	key := r.URL.Query().Get("key")
	if err := validKey(key, false); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(cl.ctx)
	defer cancel()
	v := ObjectsView{Bucket: b, Prefix: key, Objects: []ObjectView{}}
	for o := range cl.cl.s3.ListObjects(ctx, b, minio.ListObjectsOptions{Prefix: key, WithVersions: true, Recursive: true}) {
		if o.Err != nil {
			return o.Err
		}
		if o.Key != key {
			if o.Key > key {
				break
			}
			continue
		}
		v.Objects = append(v.Objects, ObjectView{Key: o.Key, Size: o.Size, LastModified: o.LastModified, ETag: strings.Trim(o.ETag, `"`),
			VersionID: o.VersionID, IsLatest: o.IsLatest, DeleteMarker: o.IsDeleteMarker})
		if len(v.Objects) >= 1000 {
			break
		}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// download streams an object as an attachment. It is always sent as
// application/octet-stream: an object holding HTML must never render in the
// console's origin.
func (c *Console) download(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	key := q.Get("key")
	if err := validKey(key, false); err != nil {
		return err
	}
	obj, err := cl.cl.s3.GetObject(cl.ctx, b, key, minio.GetObjectOptions{VersionID: q.Get("versionId")})
	if err != nil {
		return err
	}
	defer obj.Close()
	st, err := obj.Stat()
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", fmt.Sprint(st.Size))
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(key)}))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, obj)
	return nil
}

// upload stores the request body as one object. The body is the file's
// bytes (the page sends it with XMLHttpRequest for progress); its length
// must be declared and within MaxUpload.
func (c *Console) upload(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	key := r.URL.Query().Get("key")
	if err := validKey(key, false); err != nil {
		return err
	}
	if r.ContentLength < 0 {
		return fmt.Errorf("%w: Content-Length is required", errBadRequest)
	}
	if r.ContentLength > c.cfg.MaxUpload {
		return fmt.Errorf("%w: %d bytes, the limit is %d", errTooLarge, r.ContentLength, c.cfg.MaxUpload)
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/octet-stream"
	}
	body := http.MaxBytesReader(w, r.Body, c.cfg.MaxUpload)
	info, err := cl.cl.s3.PutObject(cl.ctx, b, key, body, r.ContentLength, minio.PutObjectOptions{ContentType: ct})
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errTooLarge
		}
		return err
	}
	writeJSON(w, http.StatusOK, ObjectView{Key: key, Size: info.Size, ETag: info.ETag, VersionID: info.VersionID})
	return nil
}

func (c *Console) deleteObject(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	key := q.Get("key")
	if err := validKey(key, false); err != nil {
		return err
	}
	if err := cl.cl.s3.RemoveObject(cl.ctx, b, key, minio.RemoveObjectOptions{VersionID: q.Get("versionId")}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (c *Console) bucketSettings(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	s, err := readBucketSettings(cl, b)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s)
	return nil
}

func readBucketSettings(cl *call, b string) (BucketSettings, error) {
	var s BucketSettings
	ver, err := cl.cl.s3.GetBucketVersioning(cl.ctx, b)
	if err != nil {
		return s, err
	}
	s.Versioning = ver.Status
	enc, err := cl.cl.s3.GetBucketEncryption(cl.ctx, b)
	var me minio.ErrorResponse
	switch {
	case err == nil && len(enc.Rules) > 0:
		s.Encryption = enc.Rules[0].Apply.SSEAlgorithm
	case err != nil && !(errors.As(err, &me) && me.Code == "ServerSideEncryptionConfigurationNotFoundError"):
		return s, err
	}
	return s, nil
}

func (c *Console) setBucketSettings(w http.ResponseWriter, r *http.Request, cl *call) error {
	b, err := bucketParam(r)
	if err != nil {
		return err
	}
	var req BucketSettings
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	cur, err := readBucketSettings(cl, b)
	if err != nil {
		return err
	}
	if req.Versioning != cur.Versioning {
		switch req.Versioning {
		case "Enabled", "Suspended":
			if err := cl.cl.s3.SetBucketVersioning(cl.ctx, b, minio.BucketVersioningConfiguration{Status: req.Versioning}); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: versioning must be Enabled or Suspended", errBadRequest)
		}
	}
	if req.Encryption != cur.Encryption {
		switch req.Encryption {
		case "AES256":
			err = cl.cl.s3.SetBucketEncryption(cl.ctx, b, sse.NewConfigurationSSES3())
		case "":
			err = cl.cl.s3.RemoveBucketEncryption(cl.ctx, b)
		default:
			return fmt.Errorf("%w: encryption must be AES256 or empty", errBadRequest)
		}
		if err != nil {
			return err
		}
	}
	return c.bucketSettings(w, r, cl)
}
