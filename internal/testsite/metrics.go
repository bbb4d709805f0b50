package testsite

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Scrape reads a site's /twinlake/metrics, signed with SigV4 by the given
// credential (the site's root user when accessKey is empty).
func Scrape(s *Site, accessKey, secretKey string) (string, error) {
	if accessKey == "" {
		accessKey, secretKey = s.AccessKey, s.SecretKey
	}
	req, err := http.NewRequest(http.MethodGet, s.URL+"/twinlake/metrics", nil)
	if err != nil {
		return "", err
	}
	const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	req.Header.Set("X-Amz-Content-Sha256", emptySHA)
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, emptySHA, "s3", "us-east-1", time.Now()); err != nil {
		return "", err
	}
	resp, err := s.HTTPClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("metrics: HTTP %d: %s", resp.StatusCode, body)
	}
	return string(body), err
}

// GrepLines returns the lines of text that contain sub, each ending in a
// newline: for showing the part of a metrics scrape or log a test is about.
func GrepLines(text, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
