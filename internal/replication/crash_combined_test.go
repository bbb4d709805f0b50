package replication_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/adminclient"
	"github.com/twinlake/twinlake/internal/testsite"
)

// TestKillNineDuringCombinedSends: under a concurrent load of small PUTs,
// so that the workers' batches travel combined, the receiving site is
// SIGKILLed mid-load, then the source too; after both restart, every PUT
// the source acknowledged is there, on both sites, with its content, and
// the sites hold the same versions.
func TestKillNineDuringCombinedSends(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, env, dir1, dir2, addr1, addr2 := twoProcessSites(t)
	src := testsite.StartProcess(t, bin, dir1, addr1, env...)
	dst := testsite.StartProcess(t, bin, dir2, addr2, env...)
	ctx := context.Background()
	adm, err := adminclient.New("http://"+addr1, adminclient.Credentials{AccessKey: crashUser, SecretKey: crashSecret}, adminclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = adm.ReplicateAdd(ctx, []adminclient.ReplicationSite{
		{Name: "src", Endpoint: "http://" + addr1, AccessKey: crashUser, SecretKey: crashSecret},
		{Name: "dst", Endpoint: "http://" + addr2, AccessKey: crashUser, SecretKey: crashSecret},
	})
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := rawClient(t, "http://"+addr1), rawClient(t, "http://"+addr2)
	if err := c1.MakeBucket(ctx, "combined", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	testsite.Eventually(t, 10*time.Second, func() error { _, err := c2.GetBucketVersioning(ctx, "combined"); return err })

	var mu sync.Mutex
	acked := map[string]string{} // key -> md5 of its acknowledged content
	// load PUTs n distinct keys with 8 writers; a failed PUT (the source
	// being killed) is not acknowledged and not expected.
	load := func(round, n int, during func()) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 8 {
					key := fmt.Sprintf("r%d/k%04d", round, i)
					body := bytes.Repeat([]byte(key+" "), 1+i%700)
					if _, err := c1.PutObject(ctx, "combined", key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
						continue
					}
					sum := md5.Sum(body)
					mu.Lock()
					acked[key] = hex.EncodeToString(sum[:])
					mu.Unlock()
				}
			}()
		}
		during()
		wg.Wait()
	}
	ackedCount := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	// Round 1: the receiver dies while combined batches are arriving.
	load(1, 800, func() {
		testsite.Eventually(t, 30*time.Second, func() error {
			if n := ackedCount(); n < 300 {
				return fmt.Errorf("%d acknowledged", n)
			}
			return nil
		})
		dst.Kill(t)
	})
	testsite.StartProcess(t, bin, dir2, addr2, env...)
	// Round 2: the source dies mid-load, with sends in flight.
	load(2, 800, func() {
		testsite.Eventually(t, 30*time.Second, func() error {
			if n := ackedCount(); n < 800+300 {
				return fmt.Errorf("%d acknowledged", n)
			}
			return nil
		})
		src.Kill(t)
	})
	testsite.StartProcess(t, bin, dir1, addr1, env...)

	mu.Lock()
	defer mu.Unlock()
	for _, c := range []struct {
		name string
		cl   *minio.Client
	}{{"source", c1}, {"peer", c2}} {
		testsite.Eventually(t, 60*time.Second, func() error {
			for key, want := range acked {
				if got := contentMD5(ctx, c.cl, "combined", key); got != want {
					return fmt.Errorf("%s on the %s: %s, want %s", key, c.name, got, want)
				}
			}
			return nil
		})
	}
	testsite.Eventually(t, 30*time.Second, func() error {
		return converged(ctx, []*minio.Client{c1, c2}, "combined")
	})
}
