package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/twinlake/twinlake/internal/adminclient"
)

// s3Region is the region every twinlake site answers to; the client signs
// for it without asking the server (no GetBucketLocation round trips).
const S3Region = "us-east-1"

// s3ClientConfig tunes the minio-go client built for one alias. The zero
// value suits one-shot CLI commands.
type S3ClientConfig struct {
	// Transport is shared by every request of the client; nil builds one.
	// The bench passes its own so connections are reused across workers.
	Transport http.RoundTripper
	// MaxRetries bounds minio-go's retries of one request; 0 means 3 so a
	// dead site fails a command in seconds, not minutes.
	MaxRetries int
}

// newS3Client builds a path-style, SigV4 S3 client for the alias, http or
// https as its URL says.
func NewS3Client(a Alias, cfg S3ClientConfig) (*minio.Client, error) {
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("alias URL %q: want http(s)://host:port", a.URL)
	}
	if p := strings.Trim(u.Path, "/"); p != "" {
		return nil, fmt.Errorf("alias URL %q: a path is not supported", a.URL)
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(a.AccessKey, a.SecretKey, a.SessionToken),
		Secure:       u.Scheme == "https",
		Transport:    cfg.Transport,
		Region:       S3Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   cfg.MaxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", a.URL, err)
	}
	return c, nil
}

// s3Client resolves the alias by name and builds a client for it.
func (o *Options) S3Client(aliasName string) (*minio.Client, error) {
	a, err := o.LookupAlias(aliasName)
	if err != nil {
		return nil, err
	}
	return NewS3Client(a, S3ClientConfig{})
}

// s3Err makes a minio-go error one readable line: what failed, then the S3
// error code and message, or the transport error as is. The original error
// stays wrapped for errors.As.
func S3Err(what string, err error) error {
	if err == nil {
		return nil
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.Code != "" {
		return &S3Error{what: what, resp: resp, err: err}
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: interrupted: %w", what, err)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		site := ue.URL
		if u, perr := url.Parse(ue.URL); perr == nil {
			site = u.Scheme + "://" + u.Host
		}
		return fmt.Errorf("%s: %w", what, &adminclient.UnreachableError{URL: site, Err: err})
	}
	return fmt.Errorf("%s: %w", what, err)
}

// s3Error is an S3 error response, tagged with the operation that got it.
type S3Error struct {
	what string
	resp minio.ErrorResponse
	err  error
}

func (e *S3Error) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.what, e.resp.Code, strings.TrimSuffix(e.resp.Error(), "."))
}

func (e *S3Error) Unwrap() error { return e.err }

// s3Code is the S3 error code of err, or "" when err is not an S3 response.
func S3Code(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code
	}
	return ""
}

// requireBucket parses ALIAS/BUCKET[/KEY] and rejects a missing bucket.
func RequireBucket(arg string) (Target, error) {
	t := ParseTarget(arg)
	if t.Alias == "" || t.Bucket == "" {
		return t, fmt.Errorf("%q: want ALIAS/BUCKET", arg)
	}
	return t, nil
}

// BucketClient parses ALIAS/BUCKET[/KEY] (RequireBucket) and opens an S3
// client for its alias.
func (o *Options) BucketClient(arg string) (Target, *minio.Client, error) {
	t, err := RequireBucket(arg)
	if err != nil {
		return t, nil, err
	}
	c, err := o.S3Client(t.Alias)
	return t, c, err
}

// requireKey parses ALIAS/BUCKET/KEY and rejects a missing key.
func RequireKey(arg string) (Target, error) {
	t := ParseTarget(arg)
	if t.Alias == "" || t.Bucket == "" || t.Key == "" {
		return t, fmt.Errorf("%q: want ALIAS/BUCKET/KEY", arg)
	}
	return t, nil
}

// fmtTarget renders the target back as ALIAS/BUCKET[/KEY].
func FmtTarget(t Target) string {
	s := t.Alias
	if t.Bucket != "" {
		s += "/" + t.Bucket
	}
	if t.Key != "" {
		s += "/" + t.Key
	}
	return s
}
