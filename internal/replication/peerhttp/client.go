// Package peerhttp is the peer API between twinlake sites, under
// /twinlake/peer/v1/: the client that implements replication.Peer and the
// server that hands what peers send to the replication engine. Bodies are
// the wire types of package peerwire; every call and answer carries the
// peer protocol version (peerwire.Header), which both ends check before
// reading anything else (see peerwire.CheckCaller, CheckServer). Requests are
// signed with SigV4 (service "s3") using the site-replication service
// credential, or an administrator's for the join handshake. Object data is
// sent as UNSIGNED-PAYLOAD; the receiver checks it against the version's
// ETag before committing.
package peerhttp

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
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/twinlake/twinlake/internal/iam"
	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerwire"
)

// Paths of the peer API.
const (
	Prefix      = "/twinlake/peer/v1/"
	pathHealth  = Prefix + "health"
	pathInfo    = Prefix + "info"
	pathJoin    = Prefix + "join"
	pathVersion = PathVersion
	pathBatch   = Prefix + "versions"
	pathBucket  = Prefix + "bucket"
	pathDigests = Prefix + "digests"
	pathSlot    = Prefix + "slot"
	pathResend  = Prefix + "resend"
	pathResync  = Prefix + "resync"
	pathCatalog = Prefix + "catalog"
	pathIAM     = Prefix + "iam"

	// purgeKindExpiredMarker, as a purge's kind parameter, asks the peer
	// to remove the version only where it is the key's only version
	// (objects.PurgeExpiredMarker).
	purgeKindExpiredMarker = "expired-marker"

	headerVersion = "X-Twinlake-Version"
	region        = "us-east-1"
	service       = "s3"
)

// PathVersion is where a peer sends a version with its data (PUT): a node
// of a multi-node site that receives it offers to write the data itself
// (internal/app/node_write.go).
const PathVersion = Prefix + "version"

// Client calls one peer. It implements replication.Peer. It is safe for
// concurrent use.
type Client struct {
	base   *url.URL
	creds  aws.Credentials
	http   *http.Client
	signer *v4.Signer
	// claim, when set, is the protocol version claimed on every call.
	claim int
	// peer is the protocol version the peer last answered with (0: none
	// yet); calls speak the lower of it and peerwire.Version.
	peer atomic.Int64
	// nodes are the peer site's nodes (host:port) as its last health
	// answer told them, when it has several; host, once set, is the one
	// calls go to: the first that answered when base's host did not.
	nodes atomic.Pointer[[]string]
	host  atomic.Pointer[string]
	// lives hold, for each host calls have gone to, a context that ends
	// when calls move off it (moveTo): the calls still out to it end
	// then, as ErrLinkDown, rather than wait for their own deadline at
	// a node that takes calls and answers nothing.
	mu    sync.Mutex
	lives map[string]hostLife
}

// hostLife is the time calls go to one host: its ctx ends when they move off.
type hostLife struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// errMovedOff ends the calls out to a node of the peer that calls moved
// off.
var errMovedOff = errors.New("calls moved to another node of the peer")

var _ replication.Peer = (*Client)(nil)

// ClientConfig holds a Client's optional settings.
type ClientConfig struct {
	// HTTP carries the calls. Nil: a client pooled for many parallel sends.
	HTTP *http.Client
	// Protocol, when not 0, is the protocol version claimed on every call
	// instead of the negotiated one: tests use it to play a site of
	// another version.
	Protocol int
}

// Dialer returns a replication.Dialer whose peers share hc (nil: a client
// with sane pooling for many parallel sends).
func Dialer(hc *http.Client) replication.Dialer { return DialerConfig(ClientConfig{HTTP: hc}) }

// DialerConfig returns a replication.Dialer whose peers share cfg.
func DialerConfig(cfg ClientConfig) replication.Dialer {
	if cfg.HTTP == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 256
		tr.MaxConnsPerHost = 0
		cfg.HTTP = &http.Client{Transport: tr}
	}
	return func(endpoint string, creds replication.Credentials) (replication.Peer, error) {
		return NewConfig(endpoint, creds, cfg)
	}
}

// New returns a client of the peer at endpoint (http(s)://host[:port]).
func New(endpoint string, creds replication.Credentials, hc *http.Client) (*Client, error) {
	return NewConfig(endpoint, creds, ClientConfig{HTTP: hc})
}

// NewConfig returns a client of the peer at endpoint with cfg.
func NewConfig(endpoint string, creds replication.Credentials, cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("peer endpoint %q: want http(s)://host[:port]", endpoint)
	}
	if creds.AccessKey == "" || creds.SecretKey == "" {
		return nil, errors.New("peer credentials are required")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = http.DefaultClient
	}
	return &Client{base: u, http: cfg.HTTP, claim: cfg.Protocol,
		creds:  aws.Credentials{AccessKeyID: creds.AccessKey, SecretAccessKey: creds.SecretKey},
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })}, nil
}

// speak is the protocol version of the next call.
func (c *Client) speak() int {
	if c.claim != 0 {
		return c.claim
	}
	return peerwire.Speak(int(c.peer.Load()))
}

// remoteRefusal is a peer's refusal of this site's protocol version, in
// the peer's words (which name both versions).
type remoteRefusal string

func (r remoteRefusal) Error() string        { return string(r) }
func (r remoteRefusal) Is(target error) bool { return target == peerwire.ErrIncompatible }

// do signs and sends a request, and checks the protocol version of the
// answer. body is either []byte (signed) or an io.Reader of size bytes
// (UNSIGNED-PAYLOAD). Transport failures are replication.ErrLinkDown;
// non-2xx answers are replication.ErrRefused; a refused protocol version,
// either way, is replication.ErrRefused and peerwire.ErrIncompatible.
//
// A peer that refuses the version spoken but answers with an older one
// this site still speaks is remembered: a replayable call is sent again
// at once in that version, and later calls start with it.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, hdr http.Header, body any, size int64) (*http.Response, error) {
	for {
		spoke := c.speak()
		resp, err := c.send(ctx, method, path, q, hdr, body, size, spoke)
		if err != nil {
			return nil, err
		}
		retry, err := c.answer(resp, spoke)
		if err == nil {
			return resp, nil
		}
		if _, stream := body.(io.Reader); !retry || stream {
			return nil, err
		}
	}
}

// answer checks an answer's protocol version and status; retry reports a
// refusal worth sending again in the older version the peer speaks.
func (c *Client) answer(resp *http.Response, spoke int) (retry bool, err error) {
	peer, perr := peerwire.ParseVersion(resp.Header.Get(peerwire.Header))
	if perr == nil {
		c.peer.Store(int64(peer))
		perr = peerwire.CheckServer(peer)
	}
	if resp.StatusCode/100 == 2 && perr == nil {
		return false, nil
	}
	defer resp.Body.Close()
	if perr != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return false, fmt.Errorf("%w: %s: %w", replication.ErrRefused, c.base.Host, perr)
	}
	var eb peerwire.Error
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &eb) != nil || eb.Message == "" {
		eb.Message = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	if eb.Code == peerwire.CodeIncompatible {
		return c.claim == 0 && peer < spoke, fmt.Errorf("%w: %s: %w", replication.ErrRefused, c.base.Host, remoteRefusal(eb.Message))
	}
	if eb.Code == codeNoSuchCall {
		return false, fmt.Errorf("%w: %s: %s (%s): %w", replication.ErrRefused, c.base.Host, eb.Message, eb.Code, errNoSuchCall)
	}
	return false, fmt.Errorf("%w: %s: %s (%s)", replication.ErrRefused, c.base.Host, eb.Message, eb.Code)
}

// codeNoSuchCall is the peer API error code of an unknown route, which a
// peer of an older build answers for a call added since.
const codeNoSuchCall = "NoSuchCall"

// errNoSuchCall marks a refusal with codeNoSuchCall.
var errNoSuchCall = errors.New("the peer does not know this call")

// SendIAM implements replication.IAMPeer. The record's secret travels in
// the signed body only. A peer that predates IAM replication (it answers
// NoSuchCall) is reported as replication.ErrUnsupported: the record waits,
// spending no retry, until the peer is upgraded.
func (c *Client) SendIAM(ctx context.Context, t iam.Transfer) (objects.ApplyOutcome, error) {
	raw, err := msgpack.Marshal(peerwire.FromIAM(t))
	if err != nil {
		return 0, err
	}
	resp, err := c.do(ctx, http.MethodPut, pathIAM, nil, http.Header{"Content-Type": {"application/msgpack"}}, raw, 0)
	if errors.Is(err, errNoSuchCall) {
		return 0, fmt.Errorf("%w: %s takes no IAM records (upgrade it): %w", replication.ErrUnsupported, c.base.Host, err)
	}
	if err != nil {
		return 0, err
	}
	return readOutcome(resp)
}

var _ replication.IAMPeer = (*Client)(nil)

// send signs and sends one request claiming protocol version proto.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, hdr http.Header, body any, size int64, proto int) (*http.Response, error) {
	host := c.current()
	resp, err := c.sendTo(ctx, host, method, path, q, hdr, body, size, proto)
	if err == nil || !dialFailed(err) {
		return resp, err
	}
	// Nothing was sent: the same call to another node of the peer's
	// site, which any of them takes.
	for _, other := range c.otherHosts(host) {
		resp, oerr := c.sendTo(ctx, other, method, path, q, hdr, body, size, proto)
		if oerr == nil {
			c.moveTo(host, other)
			return resp, nil
		}
		if !dialFailed(oerr) {
			return nil, oerr
		}
	}
	return nil, err
}

// moveTo makes host the one calls go to, off from, whose calls still out
// end (see Client.lives).
func (c *Client) moveTo(from, host string) {
	c.host.Store(&host)
	c.mu.Lock()
	defer c.mu.Unlock()
	if life, ok := c.lives[from]; ok {
		life.cancel(errMovedOff)
		delete(c.lives, from)
	}
}

// tie returns ctx, for a call to host, ending too when calls move off
// host, and the end of the call (which releases what ties it).
func (c *Client) tie(ctx context.Context, host string) (context.Context, func()) {
	c.mu.Lock()
	life, ok := c.lives[host]
	if !ok {
		if c.lives == nil {
			c.lives = map[string]hostLife{}
		}
		life.ctx, life.cancel = context.WithCancelCause(context.Background())
		c.lives[host] = life
	}
	c.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(life.ctx, func() { cancel(context.Cause(life.ctx)) })
	return ctx, func() {
		unhook()
		cancel(nil)
	}
}

// endingBody is a call's answer whose Close ends the call.
type endingBody struct {
	io.ReadCloser
	end func()
}

func (b endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

// current is the host calls go to: base's, or the node that answered
// when it did not.
func (c *Client) current() string {
	if h := c.host.Load(); h != nil {
		return *h
	}
	return c.base.Host
}

// otherHosts are the peer's nodes but host, base's first.
func (c *Client) otherHosts(host string) []string {
	var out []string
	if c.base.Host != host {
		out = append(out, c.base.Host)
	}
	if nodes := c.nodes.Load(); nodes != nil {
		for _, n := range *nodes {
			if n != host && n != c.base.Host {
				out = append(out, n)
			}
		}
	}
	return out
}

// dialFailed reports whether err is a call that failed to connect: nothing
// of it was sent.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// sendTo is send to host.
func (c *Client) sendTo(ctx context.Context, host, method, path string, q url.Values, hdr http.Header, body any, size int64, proto int) (*http.Response, error) {
	u := *c.base
	u.Host = host
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
		// Never closed by a call that fails: it may go to another node.
		rd = io.NopCloser(b)
	}
	ctx, end := c.tie(ctx, host)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		end()
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
	req.Header.Set(peerwire.Header, strconv.Itoa(proto))
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := c.signer.SignHTTP(ctx, c.creds, req, hash, service, region, time.Now().UTC()); err != nil {
		end()
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errMovedOff) {
			err = cause
		}
		end()
		return nil, fmt.Errorf("%w: %s: %w", replication.ErrLinkDown, host, err)
	}
	resp.Body = endingBody{resp.Body, end}
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

// SendVersion implements replication.Peer.
func (c *Client) SendVersion(ctx context.Context, bucket, key string, v *objects.Version, body io.Reader, size int64) (objects.ApplyOutcome, error) {
	raw, err := msgpack.Marshal(peerwire.FromVersion(v))
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
	var ob peerwire.Outcome
	if err := json.NewDecoder(resp.Body).Decode(&ob); err != nil {
		return 0, fmt.Errorf("%w: decode answer: %v", replication.ErrLinkDown, err)
	}
	return parseOutcome(ob.Outcome)
}

// SendPurge implements replication.Peer.
func (c *Client) SendPurge(ctx context.Context, bucket, key, versionID string, modTime int64, how objects.PurgeKind) (objects.ApplyOutcome, error) {
	q := url.Values{"bucket": {bucket}, "key": {key}, "versionId": {versionID}}
	if modTime > 0 {
		q.Set("modTime", strconv.FormatInt(modTime, 10))
	}
	if how == objects.PurgeExpiredMarker {
		// A peer that predates it ignores it, and removes the marker.
		q.Set("kind", purgeKindExpiredMarker)
	}
	resp, err := c.do(ctx, http.MethodDelete, pathVersion, q, nil, nil, 0)
	if err != nil {
		return 0, err
	}
	return readOutcome(resp)
}

// SendBucket implements replication.Peer.
func (c *Client) SendBucket(ctx context.Context, b objects.Bucket, deleted bool, at int64) (objects.ApplyOutcome, error) {
	raw, err := msgpack.Marshal(peerwire.BucketChange{Bucket: peerwire.FromBucket(b), Deleted: deleted, At: at})
	if err != nil {
		return 0, err
	}
	resp, err := c.do(ctx, http.MethodPut, pathBucket, nil, nil, raw, 0)
	if err != nil {
		return 0, err
	}
	return readOutcome(resp)
}

// Health implements replication.Peer. A node of a multi-node peer that
// fails it (down, paused, cut off: it may take connections and answer
// nothing) gives way to the first other node that answers one, which
// calls then go to.
func (c *Client) Health(ctx context.Context) error {
	var ans healthAnswer
	err := c.callJSON(ctx, http.MethodGet, pathHealth, nil, nil, &ans)
	if errors.Is(err, replication.ErrLinkDown) {
		host := c.current()
		for _, other := range c.otherHosts(host) {
			if a, oerr := c.healthAt(ctx, other); oerr == nil {
				ans, err = a, nil
				c.moveTo(host, other)
				break
			}
		}
	}
	if err != nil {
		return err
	}
	if len(ans.Nodes) > 0 {
		c.nodes.Store(&ans.Nodes)
	}
	return nil
}

// otherHealthWait bounds the health call to each other node of a peer
// whose node failed one: its own time, since the failed call may have
// used all of the caller's.
const otherHealthWait = 2 * time.Second

// healthAt is a health call to host alone.
func (c *Client) healthAt(ctx context.Context, host string) (healthAnswer, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), otherHealthWait)
	defer cancel()
	var ans healthAnswer
	spoke := c.speak()
	resp, err := c.sendTo(ctx, host, http.MethodGet, pathHealth, nil, nil, nil, 0, spoke)
	if err != nil {
		return ans, err
	}
	if _, err := c.answer(resp, spoke); err != nil {
		return ans, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswerBytes)).Decode(&ans); err != nil {
		return ans, fmt.Errorf("%w: %s: decode answer: %v", replication.ErrLinkDown, host, err)
	}
	return ans, nil
}

// Info implements replication.Peer.
func (c *Client) Info(ctx context.Context) (replication.PeerInfo, error) {
	var info peerwire.Info
	err := c.callJSON(ctx, http.MethodGet, pathInfo, nil, nil, &info)
	return info.ToInfo(), err
}

// Join implements replication.Peer.
func (c *Client) Join(ctx context.Context, st replication.State) error {
	return c.callJSON(ctx, http.MethodPost, pathJoin, nil, peerwire.FromState(st), nil)
}

// Digests implements replication.Peer.
func (c *Client) Digests(ctx context.Context) (map[string]objects.Digest, error) {
	resp, err := c.do(ctx, http.MethodGet, pathDigests, nil, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out peerwire.Digests
	if err := decodeAnswer(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("%w: decode digests: %v", replication.ErrLinkDown, err)
	}
	d, err := out.ToDigests()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", replication.ErrRefused, c.base.Host, err)
	}
	return d, nil
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
	var out []peerwire.VersionRef
	if err := decodeAnswer(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("%w: decode slot: %v", replication.ErrLinkDown, err)
	}
	return peerwire.ToRefs(out), nil
}

// Resend implements replication.Peer.
func (c *Client) Resend(ctx context.Context, site, bucket, key string) (int, error) {
	var out peerwire.Resend
	err := c.callJSON(ctx, http.MethodPost, pathResend, url.Values{"site": {site}, "bucket": {bucket}, "key": {key}}, nil, &out)
	return out.Queued, err
}

// ResyncTo implements replication.Peer.
func (c *Client) ResyncTo(ctx context.Context, site string) (replication.ResyncJob, error) {
	var job peerwire.ResyncJob
	err := c.callJSON(ctx, http.MethodGet, pathResync, url.Values{"site": {site}}, nil, &job)
	return job.ToResyncJob(), err
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
	// Encoded into a buffer sized up front: the items' data would
	// otherwise be copied at every doubling.
	hint := 256
	for _, it := range items {
		hint += len(it.Data) + 1024
	}
	raw := peerwire.AppendItems(make([]byte, 0, hint), peerwire.FromItems(items))
	resp, err := c.do(ctx, http.MethodPost, pathBatch, nil, http.Header{"Content-Type": {"application/msgpack"}}, raw, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out []peerwire.ItemResult
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: decode batch answer: %v", replication.ErrLinkDown, err)
	}
	if len(out) != len(items) {
		return nil, fmt.Errorf("%w: %d results for %d items", replication.ErrRefused, len(out), len(items))
	}
	return peerwire.ToItemResults(out), nil
}

// maxAnswerBytes bounds a MessagePack answer (digests, slot listings).
const maxAnswerBytes = 256 << 20

// decodeAnswer reads a bounded MessagePack answer and checks its lengths
// before decoding it into out.
func decodeAnswer(body io.Reader, out any) error {
	raw, err := readBounded(body, maxAnswerBytes, -1)
	if err != nil {
		return err
	}
	return decodeMsgpack(raw, out)
}
