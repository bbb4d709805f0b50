// Package adminclient is the typed client of twinlake's admin API and owns
// its wire types. The CLI reaches a server's admin surface only through this
// package; the server (internal/admin) answers with the same types. Requests
// are signed with AWS Signature Version 4 (service "s3"), body included.
package adminclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Signing parameters of admin requests.
const (
	SigningService = "s3"
	DefaultRegion  = "us-east-1"
)

// Credentials are the access and secret key requests are signed with.
type Credentials struct {
	AccessKey string
	SecretKey string
	// SessionToken, set for a temporary credential (STS AssumeRole), is
	// sent as X-Amz-Security-Token with every request.
	SessionToken string
}

// Config holds the optional settings of a Client.
type Config struct {
	// HTTPClient sends the requests. It must not set a Timeout, which would
	// cut trace streams; bound calls with their context. Default: a client
	// on http.DefaultTransport.
	HTTPClient *http.Client
	// Region is the SigV4 signing region. Default: DefaultRegion.
	Region string
	// UserAgent is sent with every request. Default: "twinlake-adminclient".
	UserAgent string
}

// Client calls one server's admin API. It is safe for concurrent use.
type Client struct {
	base   *url.URL
	creds  aws.Credentials
	cfg    Config
	signer *v4.Signer
}

// New returns a client for the server at endpoint (http(s)://host[:port]).
func New(endpoint string, creds Credentials, cfg Config) (*Client, error) {
	u, awsCreds, cfg, err := prepare(endpoint, creds, cfg)
	if err != nil {
		return nil, err
	}
	return &Client{
		base:  u,
		creds: awsCreds,
		cfg:   cfg,
		// S3 signs the path as sent, without escaping it a second time.
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
	}, nil
}

// prepare checks the endpoint and credentials every client needs and
// fills cfg's defaults.
func prepare(endpoint string, creds Credentials, cfg Config) (*url.URL, aws.Credentials, Config, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, aws.Credentials{}, cfg, fmt.Errorf("%w %q: want http(s)://host[:port]", ErrInvalidEndpoint, endpoint)
	}
	if creds.AccessKey == "" || creds.SecretKey == "" {
		return nil, aws.Credentials{}, cfg, ErrMissingCredentials
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "twinlake-adminclient"
	}
	return u, aws.Credentials{AccessKeyID: creds.AccessKey, SecretAccessKey: creds.SecretKey, SessionToken: creds.SessionToken}, cfg, nil
}

// unavailableRetries bounds how often a request answered 503 with
// Retry-After is sent again, one second apart at most: a site starting, or
// a multi-node site changing its leader, answers so for a few seconds and
// has not run the request.
const unavailableRetries = 15

// do signs and sends one request. A 2xx response is returned for the caller
// to read and close; any other status is returned as an *Error.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := c.send(ctx, method, path, query, body)
		var e *Error
		if try == unavailableRetries || !errors.As(err, &e) || e.StatusCode != http.StatusServiceUnavailable || !e.retryAfter {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
	}
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, body []byte) (*http.Response, error) {
	u := c.base.JoinPath(path)
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", ContentTypeJSON)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if err := c.signer.SignHTTP(ctx, c.creds, req, hash, SigningService, c.cfg.Region, time.Now().UTC()); err != nil {
		return nil, fmt.Errorf("adminclient: sign request: %w", err)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin %s %s: %w", method, path, &UnreachableError{URL: c.base.String(), Err: err})
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, decodeError(resp)
	}
	return resp, nil
}

// call sends a request with an optional JSON body and decodes a JSON answer
// into out.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("adminclient: encode request: %w", err)
		}
	}
	resp, err := c.do(ctx, method, path, nil, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("admin %s %s: decode answer: %w", method, path, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // let the connection be reused
	return nil
}

// ServerInfo returns the site's identity, uptime and usage.
func (c *Client) ServerInfo(ctx context.Context) (ServerInfo, error) {
	var info ServerInfo
	err := c.call(ctx, http.MethodGet, PathInfo, nil, &info)
	return info, err
}

// GetConfig returns every setting of subsys with its effective value.
func (c *Client) GetConfig(ctx context.Context, subsys string) (SubsysConfig, error) {
	var cfg SubsysConfig
	err := c.call(ctx, http.MethodGet, configPath(subsys), nil, &cfg)
	return cfg, err
}

// SetConfig changes the given settings of subsys atomically (an empty value
// resets a key to its default) and returns the subsystem's settings after
// the change. The server validates every key first and refuses the whole
// change if any is wrong (CodeInvalidConfig) or a guard objects
// (CodeConfigRefused).
func (c *Client) SetConfig(ctx context.Context, subsys string, kv map[string]string) (SubsysConfig, error) {
	var cfg SubsysConfig
	err := c.call(ctx, http.MethodPut, configPath(subsys), kv, &cfg)
	return cfg, err
}

func configPath(subsys string) string { return PathConfig + "/" + url.PathEscape(subsys) }
