package s3api_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestBoto3 runs testdata/boto3_check.py against a site: boto3 (botocore,
// the client of the AWS CLI and of most Python tools) through buckets,
// objects with keys that need escaping, checksums, managed multipart
// transfers, copies, paginated listings, versions, conditional requests,
// tags, bucket settings, presigned URLs (signature versions 2 and 4) and
// POST uploads, object lock and a wrong secret. It is skipped only where
// python3 cannot import boto3 (.ci/run installs Debian's python3-boto3).
func TestBoto3(t *testing.T) {
	python := boto3Python()
	if python == "" {
		t.Skip("no python3 imports boto3: install Debian's python3-boto3 (.ci/run does) to run it")
	}
	site := testsite.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/boto3_check.py")
	cmd.Env = append(os.Environ(), "TWINLAKE_ENDPOINT="+site.URL, "TWINLAKE_ACCESS_KEY="+site.AccessKey,
		"TWINLAKE_SECRET_KEY="+site.SecretKey, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("boto3 checks: %v\n%s", err, out)
	}
	t.Logf("boto3 checks:\n%s", out)
}

// boto3Python is the first python3 that imports boto3: the one on PATH,
// else the system's (where Debian's python3-boto3 installs); "" if none.
func boto3Python() string {
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(name); err == nil && exec.Command(p, "-c", "import boto3").Run() == nil {
			return p
		}
	}
	return ""
}
