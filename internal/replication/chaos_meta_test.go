package replication_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
)

// chaosMetaClient changes versions of chaosBucket without making new ones
// while the faults run: it tags and untags versions any site holds (the
// same version from several sites at once, racing their purges), and now
// and then writes a version through a multipart upload. acked counts the
// calls acknowledged.
func chaosMetaClient(ctx context.Context, rng *rand.Rand, s *chaosSite, led *ledger, stop chan struct{}, acked *atomic.Int64) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(rng.IntN(40)) * time.Millisecond):
		}
		key := fmt.Sprintf("k%02d", rng.IntN(12))
		opCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var err error
		if rng.IntN(25) == 0 {
			err = chaosMultipart(opCtx, rng, s, key, led)
		} else {
			err = chaosTag(opCtx, rng, s, key)
		}
		if err == nil {
			acked.Add(1)
		}
		cancel()
	}
}

// chaosTag sets random tags on one version of key that s holds, or one time
// in four removes its tags.
func chaosTag(ctx context.Context, rng *rand.Rand, s *chaosSite, key string) error {
	var vids []string
	for o := range s.s3.ListObjects(ctx, chaosBucket, minio.ListObjectsOptions{WithVersions: true, Prefix: key}) {
		if o.Err != nil {
			return o.Err
		}
		if o.Key == key && !o.IsDeleteMarker {
			vids = append(vids, o.VersionID)
		}
	}
	if len(vids) == 0 {
		return fmt.Errorf("%s: no version to tag", key)
	}
	vid := vids[rng.IntN(len(vids))]
	if rng.IntN(4) == 0 {
		return s.s3.RemoveObjectTagging(ctx, chaosBucket, key, minio.RemoveObjectTaggingOptions{VersionID: vid})
	}
	tg, err := tags.NewTags(map[string]string{"site": s.name, "n": strconv.Itoa(rng.IntN(1000))}, true)
	if err != nil {
		return err
	}
	return s.s3.PutObjectTagging(ctx, chaosBucket, key, tg, minio.PutObjectTaggingOptions{VersionID: vid})
}

// chaosMultipart writes a version of key in two parts (the first of the
// 5 MiB minimum) and records it in the ledger when acknowledged.
func chaosMultipart(ctx context.Context, rng *rand.Rand, s *chaosSite, key string, led *ledger) error {
	size := 5<<20 + 1 + rng.IntN(64<<10)
	body := make([]byte, size)
	for i := 0; i < size; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < size; j++ {
			body[i+j] = byte(v >> (8 * j))
		}
	}
	info, err := s.s3.PutObject(ctx, chaosBucket, key, bytes.NewReader(body), int64(size),
		minio.PutObjectOptions{PartSize: 5 << 20, DisableContentSha256: true})
	if err != nil {
		led.mu.Lock()
		led.errs++
		led.mu.Unlock()
		return err
	}
	led.ack("multipart", key, info.VersionID, info.ETag)
	return nil
}

// chaosTagsConverged checks that every site holds the same tags on every
// version of chaosBucket.
func chaosTagsConverged(ctx context.Context, sites []*chaosSite) error {
	type kv struct{ key, vid string }
	var all []kv
	for o := range sites[0].s3.ListObjects(ctx, chaosBucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
		if o.Err != nil {
			return o.Err
		}
		if !o.IsDeleteMarker {
			all = append(all, kv{o.Key, o.VersionID})
		}
	}
	for _, v := range all {
		var first string
		for i, s := range sites {
			tg, err := s.s3.GetObjectTagging(ctx, chaosBucket, v.key, minio.GetObjectTaggingOptions{VersionID: v.vid})
			if err != nil {
				return fmt.Errorf("%s: tags of %s %s: %w", s.name, v.key, v.vid, err)
			}
			got := tg.String()
			if i == 0 {
				first = got
			} else if got != first {
				return fmt.Errorf("tags of %s %s differ: %s has %q, %s has %q", v.key, v.vid, sites[0].name, first, s.name, got)
			}
		}
	}
	return nil
}
