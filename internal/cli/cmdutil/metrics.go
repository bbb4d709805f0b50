package cmdutil

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// MetricsPath is where a site serves its Prometheus metrics.
const MetricsPath = "/twinlake/metrics"

// ScrapeMetrics copies the site's metrics to w, asking for the classic text
// format (what grep and promtool expect) with a request signed as a's user.
func ScrapeMetrics(ctx context.Context, a Alias, w io.Writer) error {
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("URL %q: want http(s)://host[:port]", a.URL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.JoinPath(MetricsPath).String(), nil)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(nil)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	req.Header.Set("User-Agent", "twinlake-cli/"+Version)
	creds := aws.Credentials{AccessKeyID: a.AccessKey, SecretAccessKey: a.SecretKey}
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hash, adminclient.SigningService, adminclient.DefaultRegion, time.Now().UTC()); err != nil {
		return fmt.Errorf("sign request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
