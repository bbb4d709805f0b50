// Package peerv1 is a frozen copy of the peer API's client and server as
// they were at protocol version 1 (commit befccfd, before
// internal/replication/peerwire): bodies are the storage records' own
// MessagePack and JSON layouts, and no protocol header is sent, read or
// answered. Tests run a site on it to show that a version 2 site keeps
// replicating with a version 1 peer during a rolling upgrade.
//
// Do not change what it sends or reads. Edit it only to follow domain API
// changes (objects, replication) that leave the wire as it was, and delete
// it when MinCompatible passes 1.
package peerv1

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
)

// Paths of the peer API.
const (
	Prefix      = "/twinlake/peer/v1/"
	pathHealth  = Prefix + "health"
	pathInfo    = Prefix + "info"
	pathJoin    = Prefix + "join"
	pathVersion = Prefix + "version"
	pathBatch   = Prefix + "versions"
	pathBucket  = Prefix + "bucket"
	pathDigests = Prefix + "digests"
	pathSlot    = Prefix + "slot"
	pathResend  = Prefix + "resend"
	pathResync  = Prefix + "resync"
	pathCatalog = Prefix + "catalog"

	headerVersion = "X-Twinlake-Version"
	region        = "us-east-1"
	service       = "s3"
)

// Client calls one peer. It implements replication.Peer.
type Client struct {
	base   *url.URL
	creds  aws.Credentials
	http   *http.Client
	signer *v4.Signer
}

var _ replication.Peer = (*Client)(nil)

// Dialer returns a replication.Dialer whose peers share hc (nil: a client
// with sane pooling for many parallel sends).
func Dialer(hc *http.Client) replication.Dialer {
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 256
		tr.MaxConnsPerHost = 0
		hc = &http.Client{Transport: tr}
	}
	return func(endpoint string, creds replication.Credentials) (replication.Peer, error) {
		return New(endpoint, creds, hc)
	}
}

// New returns a client of the peer at endpoint (http(s)://host[:port]).
func New(endpoint string, creds replication.Credentials, hc *http.Client) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("peer endpoint %q: want http(s)://host[:port]", endpoint)
	}
	if creds.AccessKey == "" || creds.SecretKey == "" {
		return nil, errors.New("peer credentials are required")
	}
	return &Client{base: u, http: hc,
		creds:  aws.Credentials{AccessKeyID: creds.AccessKey, SecretAccessKey: creds.SecretKey},
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })}, nil
}

// errorBody is the peer API's error answer.
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// outcomeBody answers an apply call.
type outcomeBody struct {
	Outcome string `json:"outcome"`
}

// do signs and sends a request. body is either []byte (signed) or an
// io.Reader of size bytes (UNSIGNED-PAYLOAD). Transport failures are
// replication.ErrLinkDown; non-2xx answers are replication.ErrRefused.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, hdr http.Header, body any, size int64) (*http.Response, error) {
	u := *c.base
	u.Path = path
	u.RawQuery = q.Encode()
	var rd io.Reader
	hash := "UNSIGNED-PAYLOAD"
	switch b := body.(type) {
	case nil:
		sum := sha256.Sum256(nil)
		hash = hex.EncodeToString(sum[:])
	case []byte:
		rd = bytes.NewReader(b)
		sum := sha256.Sum256(b)
		hash = hex.EncodeToString(sum[:])
		size = int64(len(b))
	case io.Reader:
		rd = b
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.ContentLength = size
		if size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := c.signer.SignHTTP(ctx, c.creds, req, hash, service, region, time.Now().UTC()); err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", replication.ErrLinkDown, c.base.Host, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var eb errorBody
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(raw, &eb) != nil || eb.Message == "" {
			eb.Message = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
		}
		return nil, fmt.Errorf("%w: %s: %s (%s)", replication.ErrRefused, c.base.Host, eb.Message, eb.Code)
	}
	return resp, nil
}

func (c *Client) callJSON(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body any
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = b
	}
	resp, err := c.do(ctx, method, path, q, nil, body, 0)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%w: %s: decode answer: %v", replication.ErrLinkDown, c.base.Host, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

func parseOutcome(s string) (objects.ApplyOutcome, error) {
	for _, o := range []objects.ApplyOutcome{objects.Applied, objects.Duplicate, objects.Stale} {
		if o.String() == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown outcome %q", replication.ErrRefused, s)
}

// wireVersion strips what is local to a site (blob IDs, inline bytes,
// sealed keys, target status) from a version record.
func wireVersion(v *objects.Version) *objects.Version {
	w := *v
	w.Targets = nil
	w.Segments = make([]objects.Segment, len(v.Segments))
	for i, s := range v.Segments {
		w.Segments[i] = objects.Segment{Number: s.Number, Size: s.Size, ETag: s.ETag, Checksum: s.Checksum}
	}
	return &w
}

// SendVersion implements replication.Peer.
func (c *Client) SendVersion(ctx context.Context, bucket, key string, v *objects.Version, body io.Reader, size int64) (objects.ApplyOutcome, error) {
	raw, err := msgpack.Marshal(wireVersion(v))
	if err != nil {
		return 0, err
	}
	hdr := http.Header{headerVersion: {base64.StdEncoding.EncodeToString(raw)}}
	q := url.Values{"bucket": {bucket}, "key": {key}}
	if v.DeleteMarker {
		size = 0
	}
	resp, err := c.do(ctx, http.MethodPut, pathVersion, q, hdr, body, size)
	if err != nil {
		return 0, err
	}
	return readOutcome(resp)
}

func readOutcome(resp *http.Response) (objects.ApplyOutcome, error) {
	defer resp.Body.Close()
	var ob outcomeBody
	if err := json.NewDecoder(resp.Body).Decode(&ob); err != nil {
		return 0, fmt.Errorf("%w: decode answer: %v", replication.ErrLinkDown, err)
	}
	return parseOutcome(ob.Outcome)
}

// SendPurge implements replication.Peer.
func (c *Client) SendPurge(ctx context.Context, bucket, key, versionID string, modTime int64, _ objects.PurgeKind) (objects.ApplyOutcome, error) {
	q := url.Values{"bucket": {bucket}, "key": {key}, "versionId": {versionID}}
	if modTime > 0 {
		q.Set("modTime", strconv.FormatInt(modTime, 10))
	}
	resp, err := c.do(ctx, http.MethodDelete, pathVersion, q, nil, nil, 0)
	if err != nil {
		return 0, err
	}
	return readOutcome(resp)
}

// bucketBody carries a bucket record or its deletion.
type bucketBody struct {
	Bucket  objects.Bucket `msgpack:"b"`
	Deleted bool           `msgpack:"d"`
	At      int64          `msgpack:"at"`
}

// SendBucket implements replication.Peer.
func (c *Client) SendBucket(ctx context.Context, b objects.Bucket, deleted bool, at int64) (objects.ApplyOutcome, error) {
	raw, err := msgpack.Marshal(bucketBody{Bucket: b, Deleted: deleted, At: at})
	if err != nil {
		return 0, err
	}
	resp, err := c.do(ctx, http.MethodPut, pathBucket, nil, nil, raw, 0)
	if err != nil {
		return 0, err
	}
	return readOutcome(resp)
}

// Health implements replication.Peer.
func (c *Client) Health(ctx context.Context) error {
	return c.callJSON(ctx, http.MethodGet, pathHealth, nil, nil, nil)
}

// Info implements replication.Peer.
func (c *Client) Info(ctx context.Context) (replication.PeerInfo, error) {
	var info replication.PeerInfo
	err := c.callJSON(ctx, http.MethodGet, pathInfo, nil, nil, &info)
	return info, err
}

// Join implements replication.Peer.
func (c *Client) Join(ctx context.Context, st replication.State) error {
	return c.callJSON(ctx, http.MethodPost, pathJoin, nil, st, nil)
}

// Digests implements replication.Peer.
func (c *Client) Digests(ctx context.Context) (map[string]objects.Digest, error) {
	resp, err := c.do(ctx, http.MethodGet, pathDigests, nil, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]objects.Digest
	if err := msgpack.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: decode digests: %v", replication.ErrLinkDown, err)
	}
	return out, nil
}

// SlotVersions implements replication.Peer.
func (c *Client) SlotVersions(ctx context.Context, bucket string, slots []int) ([]objects.VersionRef, error) {
	q := url.Values{"bucket": {bucket}}
	for _, s := range slots {
		q.Add("slot", strconv.Itoa(s))
	}
	resp, err := c.do(ctx, http.MethodGet, pathSlot, q, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []objects.VersionRef
	if err := msgpack.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: decode slot: %v", replication.ErrLinkDown, err)
	}
	return out, nil
}

// resendBody answers a resend request.
type resendBody struct {
	Queued int `json:"queued"`
}

// Resend implements replication.Peer.
func (c *Client) Resend(ctx context.Context, site, bucket, key string) (int, error) {
	var out resendBody
	err := c.callJSON(ctx, http.MethodPost, pathResend, url.Values{"site": {site}, "bucket": {bucket}, "key": {key}}, nil, &out)
	return out.Queued, err
}

// ResyncTo implements replication.Peer.
func (c *Client) ResyncTo(ctx context.Context, site string) (replication.ResyncJob, error) {
	var job replication.ResyncJob
	err := c.callJSON(ctx, http.MethodGet, pathResync, url.Values{"site": {site}}, nil, &job)
	return job, err
}

// CatalogExport implements replication.Peer.
func (c *Client) CatalogExport(ctx context.Context) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodGet, pathCatalog, nil, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("%w: read catalog export: %v", replication.ErrLinkDown, err)
	}
	return data, nil
}

// SendVersions implements replication.Peer. The batch travels as one
// signed MessagePack body.
func (c *Client) SendVersions(ctx context.Context, items []replication.VersionItem) ([]replication.ItemResult, error) {
	wire := make([]replication.VersionItem, len(items))
	for i, it := range items {
		wire[i] = replication.VersionItem{Bucket: it.Bucket, Key: it.Key, Version: wireVersion(it.Version), Data: it.Data}
	}
	raw, err := msgpack.Marshal(wire)
	if err != nil {
		return nil, err
	}
	resp, err := c.do(ctx, http.MethodPost, pathBatch, nil, http.Header{"Content-Type": {"application/msgpack"}}, raw, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []replication.ItemResult
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: decode batch answer: %v", replication.ErrLinkDown, err)
	}
	if len(out) != len(items) {
		return nil, fmt.Errorf("%w: %d results for %d items", replication.ErrRefused, len(out), len(items))
	}
	return out, nil
}
