package benchcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/minio/minio-go/v7"
	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/bench"
)

// purgeManifestFiles is how many data files one manifest of the purge
// table names.
const purgeManifestFiles = 1000

// purgePhase builds a table of files data files (1 KiB objects, named in
// manifests of purgeManifestFiles each under one snapshot) and measures
// dropping it with purgeRequested: one operation, whose row carries the
// files deleted per second (keys_per_sec).
func (b *catalogBench) purgePhase(ctx context.Context, cmd *cobra.Command, rep *BenchCatalogReport, files int) error {
	s3, wh := b.s3, b.wh
	id := b.ident("purge", 0)
	location, err := b.createTable(ctx, id)
	if err != nil {
		return err
	}
	prefix, ok := strings.CutPrefix(location, "s3://"+wh+"/")
	if !ok {
		return fmt.Errorf("bench: table location %s is not in warehouse %s", location, wh)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "bench: building a table of %d data files ...\n", files)
	body := bytes.Repeat([]byte("p"), 1024)
	dataKey := func(i int64) string { return fmt.Sprintf("%s/data/%06d.parquet", prefix, i) }
	put := func(ctx context.Context, key string, data []byte) error {
		_, err := s3.PutObject(ctx, wh, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		return err
	}
	up := bench.Config{Concurrency: b.conc, Count: int64(files), StopOnError: true}
	r, err := bench.Run(ctx, up, func(ctx context.Context, seq int64) error { return put(ctx, dataKey(seq), body) })
	if err == nil && r.Errors > 0 {
		err = r.FirstErr
	}
	if err != nil {
		return fmt.Errorf("bench: write the purge table's data files: %w", err)
	}
	const snapID, seq = int64(1), int64(1)
	var schema iceberg.Schema
	if err := json.Unmarshal(benchSchema, &schema); err != nil {
		return err
	}
	var manifests []iceberg.ManifestFile
	for from := 0; from < files; from += purgeManifestFiles {
		var entries []iceberg.ManifestEntry
		for i := from; i < min(from+purgeManifestFiles, files); i++ {
			df, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData,
				"s3://"+wh+"/"+dataKey(int64(i)), iceberg.ParquetFile, nil, nil, nil, 1, int64(len(body)))
			if err != nil {
				return err
			}
			s, n := snapID, seq
			entries = append(entries, iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &s, &n, &n, df.Build()))
		}
		key := fmt.Sprintf("%s/metadata/bench-m%d.avro", prefix, from/purgeManifestFiles)
		var buf bytes.Buffer
		mf, err := iceberg.WriteManifest("s3://"+wh+"/"+key, &buf, 2, *iceberg.UnpartitionedSpec, &schema, snapID, entries)
		if err != nil {
			return err
		}
		if err := put(ctx, key, buf.Bytes()); err != nil {
			return err
		}
		manifests = append(manifests, mf)
	}
	listKey := prefix + "/metadata/snap-1-bench.avro"
	var list bytes.Buffer
	n := seq
	if err := iceberg.WriteManifestList(2, &list, snapID, nil, &n, 0, manifests); err != nil {
		return err
	}
	if err := put(ctx, listKey, list.Bytes()); err != nil {
		return err
	}
	upd, err := json.Marshal([]map[string]any{
		{"action": "add-snapshot", "snapshot": map[string]any{"snapshot-id": snapID, "sequence-number": seq,
			"timestamp-ms": time.Now().UnixMilli(), "manifest-list": "s3://" + wh + "/" + listKey,
			"summary": map[string]string{"operation": "append"}, "schema-id": 0}},
		{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapID},
	})
	if err != nil {
		return err
	}
	if _, err := b.c.CommitTable(ctx, id, json.RawMessage(`[]`), upd); err != nil {
		return fmt.Errorf("bench: commit the purge table's snapshot: %w", err)
	}
	name := fmt.Sprintf("purge-%dfiles", files)
	if err := b.phaseRow(ctx, cmd, rep, name, bench.Config{Concurrency: 1, Count: 1, StopOnError: true},
		func(ctx context.Context, _ int64) error { return b.c.DropTable(ctx, id, true) }); err != nil {
		return err
	}
	row := &rep.Results[len(rep.Results)-1]
	if row.Seconds > 0 {
		row.KeysPerSec = float64(files+len(manifests)+3) / row.Seconds // and the list and two metadata files
	}
	left, err := b.keysUnder(ctx, prefix+"/data/")
	if err == nil && left > 0 {
		err = fmt.Errorf("%d data files left after the purge", left)
	}
	return err
}

// keysUnder counts the objects listed under prefix.
func (b *catalogBench) keysUnder(ctx context.Context, prefix string) (int, error) {
	n := 0
	for o := range b.s3.ListObjects(ctx, b.wh, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return n, o.Err
		}
		n++
	}
	return n, nil
}
