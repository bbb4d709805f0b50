package objects

import (
	"context"
)

// PutObjectTags replaces the tag set of a version (the latest when
// versionID is empty) without creating a new version.
func (l *Layer) PutObjectTags(ctx context.Context, bucket, key, versionID string, tags map[string]string) (*Version, error) {
	if err := validateTags(tags, 10); err != nil {
		return nil, err
	}
	unlock := l.lockKey(bucket, key)
	defer unlock()
	v, err := l.HeadObject(ctx, bucket, key, versionID)
	if err != nil {
		return v, err
	}
	old := *v
	v.Tags = tags
	v.MetaTime = l.cfg.Clock.Now()
	batch := l.meta.NewBatch()
	l.replVersion(batch, bucket, key, v)
	batch.Set(versionKey(bucket, key, v.VersionID), encode(v))
	t := tally{key: key}
	t.version(&old)
	t.version(v)
	if err := l.commit(batch, bucket, &t, true); err != nil {
		return v, err
	}
	l.replCommitted()
	return v, nil
}
