package replication_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
	"github.com/twinlake/twinlake/internal/testsite/faultproxy"
)

const (
	crashUser   = "crashroot"
	crashSecret = "crash-root-secret-key"
)

func rawClient(t *testing.T, endpoint string) *minio.Client {
	t.Helper()
	u, _ := url.Parse(endpoint)
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(crashUser, crashSecret, ""), Region: "us-east-1", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// twoProcessSites builds the binary and picks, for two site processes,
// their environment (root credentials, short retries), data directories
// and addresses.
func twoProcessSites(t *testing.T) (bin string, env []string, dir1, dir2, addr1, addr2 string) {
	t.Helper()
	bin = testsite.BuildBinary(t)
	env = []string{"TWINLAKE_ROOT_USER=" + crashUser, "TWINLAKE_ROOT_PASSWORD=" + crashSecret,
		"TWINLAKE_REPLICATION_RETRY_BASE_DELAY=50ms", "TWINLAKE_REPLICATION_RETRY_MAX_DELAY=500ms"}
	dir1, dir2 = filepath.Join(t.TempDir(), "s1"), filepath.Join(t.TempDir(), "s2")
	addr1, addr2 = testsite.FreeAddr(t), testsite.FreeAddr(t)
	return bin, env, dir1, dir2, addr1, addr2
}

// TestKillNineSourceWithDeepQueue: the source is SIGKILLed while its peer
// is unreachable and hundreds of changes wait in its journal; after the
// restart nothing acknowledged is lost and everything reaches the peer.
func TestKillNineSourceWithDeepQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, env, dir1, dir2, addr1, addr2 := twoProcessSites(t)
	src := testsite.StartProcess(t, bin, dir1, addr1, env...)
	testsite.StartProcess(t, bin, dir2, addr2, env...)
	proxy, err := faultproxy.New(addr2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })

	ctx := context.Background()
	adm, err := adminclient.New("http://"+addr1, adminclient.Credentials{AccessKey: crashUser, SecretKey: crashSecret}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = adm.ReplicateAdd(ctx, []adminclient.ReplicationSite{
		{Name: "src", Endpoint: "http://" + addr1, AccessKey: crashUser, SecretKey: crashSecret},
		{Name: "dst", Endpoint: proxy.URL(), AccessKey: crashUser, SecretKey: crashSecret},
	})
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := rawClient(t, "http://"+addr1), rawClient(t, "http://"+addr2)
	if err := c1.MakeBucket(ctx, "deep", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := c2.GetBucketVersioning(ctx, "deep"); return err })

	proxy.Cut()
	acked := map[string]string{} // key -> md5 of its latest acknowledged content
	for i := range 400 {
		key := fmt.Sprintf("k%03d", i%250)
		body := bytes.Repeat([]byte(fmt.Sprintf("%s-%d ", key, i)), 1+i%300)
		if _, err := c1.PutObject(ctx, "deep", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(body)
		acked[key] = hex.EncodeToString(sum[:])
	}
	for i := range 20 {
		key := fmt.Sprintf("k%03d", 200+i)
		if err := c1.RemoveObject(ctx, "deep", key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		acked[key] = "deleted"
	}
	src.Kill(t)
	proxy.Restore()
	testsite.StartProcess(t, bin, dir1, addr1, env...)

	testsite.Eventually(t, 60*time.Second, func() error {
		for key, want := range acked {
			got := contentMD5(ctx, c2, "deep", key)
			if got != want {
				return fmt.Errorf("%s on the peer: %s, want %s", key, got, want)
			}
		}
		return nil
	})
	// The source kept everything too.
	for key, want := range acked {
		if got := contentMD5(ctx, c1, "deep", key); got != want {
			t.Fatalf("%s on the source after restart: %s, want %s", key, got, want)
		}
	}
	// Every version, not just the latest, reached the peer.
	testsite.Eventually(t, 30*time.Second, func() error {
		return converged(ctx, []*minio.Client{c1, c2}, "deep")
	})
}

func contentMD5(ctx context.Context, c *minio.Client, bucket, key string) string {
	o, err := c.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return "error " + err.Error()
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return "deleted"
		}
		return "error " + err.Error()
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}
