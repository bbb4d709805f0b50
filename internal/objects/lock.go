package objects

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Object lock (WORM), as S3 defines it. A bucket created with object lock
// (or a versioned bucket that had it turned on) is versioned for ever; each
// version may carry a retention (a mode and a retain-until date) and a
// legal hold. While a version's retention runs, or its legal hold is on,
// nothing removes that version: not a DELETE naming it, not a peer's purge
// (compliance and legal hold; see ApplyPurge), not a bucket deletion (the
// bucket is not empty). A DELETE without a version ID still adds a delete
// marker, as in S3: the locked data stays, hidden.

// Retention modes.
const (
	// LockGovernance is a retention that a caller allowed
	// s3:BypassGovernanceRetention may shorten or remove.
	LockGovernance = "GOVERNANCE"
	// LockCompliance is a retention nobody can shorten or remove before it
	// expires; it can only be extended.
	LockCompliance = "COMPLIANCE"
)

// Legal hold states.
const (
	LegalHoldOn  = "ON"
	LegalHoldOff = "OFF"
)

// FieldObjectLock names the object lock configuration in Bucket.FieldTimes.
const FieldObjectLock = "objectlock"

// Bounds of a default retention period, as AWS sets them.
const (
	MaxLockDays  = 36500
	MaxLockYears = 100
)

// LockConfig is a bucket's object lock configuration. A bucket with a
// non-nil one has object lock enabled (which cannot be undone); Mode with
// Days or Years is the default retention of new versions (Mode empty: none).
type LockConfig struct {
	Mode  string `msgpack:"m,omitempty"`
	Days  int    `msgpack:"d,omitempty"`
	Years int    `msgpack:"y,omitempty"`
}

// Period is the default retention's length (0 when there is none).
func (c *LockConfig) Period() time.Duration {
	if c == nil || c.Mode == "" {
		return 0
	}
	return time.Duration(c.Days)*24*time.Hour + time.Duration(c.Years)*365*24*time.Hour
}

// defaultUntil is the retain-until date of a version written at now under
// the default retention.
func (c *LockConfig) defaultUntil(now time.Time) time.Time {
	if c.Years > 0 {
		return now.AddDate(c.Years, 0, 0)
	}
	return now.AddDate(0, 0, c.Days)
}

func lockConfigEqual(a, b *LockConfig) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// LockEnabled reports whether the bucket has object lock.
func (b *Bucket) LockEnabled() bool { return b.ObjectLock != nil }

// Lock is the lock a write asks for (PutOptions.Lock): a retention (Mode
// and RetainUntil, both or neither) and a legal hold ("ON", "OFF" or "").
type Lock struct {
	Mode        string
	RetainUntil time.Time
	LegalHold   string
}

// IsZero reports whether the write asks for no lock.
func (k Lock) IsZero() bool { return k.Mode == "" && k.RetainUntil.IsZero() && k.LegalHold == "" }

// Retention is a version's retention: Mode empty means none.
type Retention struct {
	Mode        string
	RetainUntil time.Time
}

// Retention returns the version's retention.
func (v *Version) Retention() Retention {
	if v.LockMode == "" {
		return Retention{}
	}
	return Retention{Mode: v.LockMode, RetainUntil: time.Unix(0, v.RetainUntil).UTC()}
}

// retained reports whether the version's retention runs at now.
func (v *Version) retained(now time.Time) bool {
	return v.LockMode != "" && v.RetainUntil > now.UnixNano()
}

// Locked reports whether the version may not be removed at now: its legal
// hold is on, or its retention runs (a governance retention only when
// bypass is false).
func (v *Version) Locked(now time.Time, bypass bool) bool {
	if v.LegalHold == LegalHoldOn {
		return true
	}
	if !v.retained(now) {
		return false
	}
	return v.LockMode == LockCompliance || !bypass
}

// Errors of object lock. The S3 edge maps each to its S3 error.
var (
	// ErrObjectLocked: the version is under retention or legal hold (AccessDenied).
	ErrObjectLocked = errors.New("objects: object is WORM protected")
	// ErrLockNotEnabled: a lock asked of a bucket without object lock (InvalidRequest).
	ErrLockNotEnabled = errors.New("objects: bucket has no object lock configuration")
	// ErrNoLockConfig: GetObjectLockConfiguration of a bucket without object lock
	// (ObjectLockConfigurationNotFoundError).
	ErrNoLockConfig = errors.New("objects: object lock configuration not found")
	// ErrNoObjectLock: the version has no retention or legal hold
	// (NoSuchObjectLockConfiguration).
	ErrNoObjectLock = errors.New("objects: version has no object lock")
	// ErrLockBucketState: versioning cannot change on a bucket with object
	// lock, and object lock needs versioning enabled (InvalidBucketState).
	ErrLockBucketState = errors.New("objects: invalid bucket state for object lock")
	// ErrInvalidLock: a malformed mode, date or period (InvalidArgument).
	ErrInvalidLock = errors.New("objects: invalid object lock request")
)

// now is the wall clock retention dates are compared with.
func (l *Layer) now() time.Time { return time.Now() }

// CreateBucketWithLock creates an empty bucket with versioning enabled and
// object lock on (without a default retention).
func (l *Layer) CreateBucketWithLock(ctx context.Context, name string) error {
	return l.createBucket(name, func(b *Bucket) {
		b.Versioning = VersioningEnabled
		b.ObjectLock = &LockConfig{}
		b.FieldTimes = map[string]int64{FieldVersioning: b.ModTime, FieldObjectLock: b.ModTime}
	})
}

// ValidateLockConfig checks a default retention: none, or a mode with
// exactly one of Days and Years, positive and within AWS's bounds.
func ValidateLockConfig(c LockConfig) error {
	if c.Mode == "" {
		if c.Days != 0 || c.Years != 0 {
			return fmt.Errorf("%w: a default retention period needs a mode", ErrInvalidLock)
		}
		return nil
	}
	if c.Mode != LockGovernance && c.Mode != LockCompliance {
		return fmt.Errorf("%w: unknown retention mode %q", ErrInvalidLock, c.Mode)
	}
	switch {
	case c.Days != 0 && c.Years != 0:
		return fmt.Errorf("%w: Days and Years are exclusive", ErrInvalidLock)
	case c.Days == 0 && c.Years == 0:
		return fmt.Errorf("%w: a default retention needs Days or Years", ErrInvalidLock)
	case c.Days < 0 || c.Years < 0:
		return fmt.Errorf("%w: the retention period must be positive", ErrInvalidLock)
	case c.Days > MaxLockDays || c.Years > MaxLockYears:
		return fmt.Errorf("%w: the retention period is too long", ErrInvalidLock)
	}
	return nil
}

// SetObjectLockConfig sets the bucket's default retention, turning object
// lock on if it is not (which needs versioning enabled, as in S3).
func (l *Layer) SetObjectLockConfig(ctx context.Context, bucket string, c LockConfig) error {
	if err := ValidateLockConfig(c); err != nil {
		return err
	}
	return l.UpdateBucket(ctx, bucket, func(b *Bucket) error {
		if b.ObjectLock == nil && b.Versioning != VersioningEnabled {
			return fmt.Errorf("%w: object lock needs versioning enabled", ErrLockBucketState)
		}
		cc := c
		b.ObjectLock = &cc
		return nil
	})
}

// ObjectLockConfig returns the bucket's object lock configuration.
func (l *Layer) ObjectLockConfig(ctx context.Context, bucket string) (LockConfig, error) {
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return LockConfig{}, err
	}
	if b.ObjectLock == nil {
		return LockConfig{}, ErrNoLockConfig
	}
	return *b.ObjectLock, nil
}

// ValidateLock checks the lock a write asks for against the bucket.
func ValidateLock(b *Bucket, k Lock, now time.Time) error {
	if k.IsZero() {
		return nil
	}
	if !b.LockEnabled() {
		return ErrLockNotEnabled
	}
	if (k.Mode == "") != k.RetainUntil.IsZero() {
		return fmt.Errorf("%w: a retention needs both a mode and a retain-until date", ErrInvalidLock)
	}
	if k.Mode != "" && k.Mode != LockGovernance && k.Mode != LockCompliance {
		return fmt.Errorf("%w: unknown retention mode %q", ErrInvalidLock, k.Mode)
	}
	if k.Mode != "" && !k.RetainUntil.After(now) {
		return fmt.Errorf("%w: the retain-until date must be in the future", ErrInvalidLock)
	}
	if k.LegalHold != "" && k.LegalHold != LegalHoldOn && k.LegalHold != LegalHoldOff {
		return fmt.Errorf("%w: legal hold status %q", ErrInvalidLock, k.LegalHold)
	}
	return nil
}

// setLock puts the lock a write asks for on its new version.
func (v *Version) setLock(k Lock) {
	v.LockMode, v.RetainUntil, v.LegalHold = k.Mode, 0, k.LegalHold
	if k.Mode != "" {
		v.RetainUntil = k.RetainUntil.UnixNano()
	}
}

// lockNewVersion completes the lock of a version about to be committed in
// bucket b (the lock its write asked for, see setLock): without a
// retention of its own it gets the bucket's default retention. A lock in a
// bucket without object lock is refused.
func (l *Layer) lockNewVersion(b *Bucket, v *Version) error {
	if !b.LockEnabled() {
		if v.LockMode != "" || v.LegalHold != "" {
			return ErrLockNotEnabled
		}
		return nil
	}
	if v.LockMode == "" && b.ObjectLock.Mode != "" {
		v.LockMode, v.RetainUntil = b.ObjectLock.Mode, b.ObjectLock.defaultUntil(l.now()).UnixNano()
	}
	return nil
}

// SetRetentionOptions qualify SetObjectRetention.
type SetRetentionOptions struct {
	// BypassGovernance lets a governance retention be shortened or
	// removed (the caller is allowed s3:BypassGovernanceRetention).
	BypassGovernance bool
}

// SetObjectRetention sets a version's retention (the latest when versionID
// is empty) without creating a new version; r with an empty Mode removes
// it. A compliance retention that runs can only be extended; a governance
// one can be extended, and shortened, removed or turned into compliance
// only with BypassGovernance (as S3 and its conformance suite have it).
func (l *Layer) SetObjectRetention(ctx context.Context, bucket, key, versionID string, r Retention, opts SetRetentionOptions) (*Version, error) {
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !b.LockEnabled() {
		return nil, ErrLockNotEnabled
	}
	now := l.now()
	if r.Mode != "" {
		if err := ValidateLock(&b, Lock{Mode: r.Mode, RetainUntil: r.RetainUntil}, now); err != nil {
			return nil, err
		}
	} else if !r.RetainUntil.IsZero() {
		return nil, fmt.Errorf("%w: a retain-until date needs a mode", ErrInvalidLock)
	}
	return l.updateVersionLock(ctx, bucket, key, versionID, func(v *Version) error {
		if err := retentionChange(v, r, now, opts.BypassGovernance); err != nil {
			return err
		}
		v.LockMode, v.RetainUntil = r.Mode, 0
		if r.Mode != "" {
			v.RetainUntil = r.RetainUntil.UnixNano()
		}
		return nil
	})
}

// retentionChange decides whether a version's retention may become r at
// now.
func retentionChange(v *Version, r Retention, now time.Time, bypass bool) error {
	if !v.retained(now) {
		return nil // none, or expired: anything goes
	}
	weaker := r.Mode == "" || r.RetainUntil.UnixNano() < v.RetainUntil
	switch v.LockMode {
	case LockCompliance:
		if weaker || r.Mode != LockCompliance {
			return fmt.Errorf("%w: a compliance retention can only be extended", ErrObjectLocked)
		}
	case LockGovernance:
		if (weaker || r.Mode != LockGovernance) && !bypass {
			return fmt.Errorf("%w: shortening, removing or changing the mode of a governance retention needs x-amz-bypass-governance-retention", ErrObjectLocked)
		}
	}
	return nil
}

// SetObjectLegalHold turns a version's legal hold on or off (the latest
// version when versionID is empty).
func (l *Layer) SetObjectLegalHold(ctx context.Context, bucket, key, versionID string, on bool) (*Version, error) {
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !b.LockEnabled() {
		return nil, ErrLockNotEnabled
	}
	return l.updateVersionLock(ctx, bucket, key, versionID, func(v *Version) error {
		v.LegalHold = LegalHoldOff
		if on {
			v.LegalHold = LegalHoldOn
		}
		return nil
	})
}

// updateVersionLock applies fn to a version's record as a metadata change
// (replicated like a tag change).
func (l *Layer) updateVersionLock(ctx context.Context, bucket, key, versionID string, fn func(v *Version) error) (*Version, error) {
	unlock := l.lockKey(bucket, key)
	defer unlock()
	v, err := l.HeadObject(ctx, bucket, key, versionID)
	if err != nil {
		return v, err
	}
	old := *v
	if err := fn(v); err != nil {
		return nil, err
	}
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

// ObjectLockOf returns a version's lock for GetObjectRetention and
// GetObjectLegalHold.
func (l *Layer) ObjectLockOf(ctx context.Context, bucket, key, versionID string) (*Version, error) {
	b, err := l.Bucket(ctx, bucket)
	if err != nil {
		return nil, err
	}
	if !b.LockEnabled() {
		return nil, ErrLockNotEnabled
	}
	return l.HeadObject(ctx, bucket, key, versionID)
}

// DeleteOptions qualify DeleteObjectWith.
type DeleteOptions struct {
	// BypassGovernance lets a version under a governance retention be
	// removed (the caller is allowed s3:BypassGovernanceRetention).
	BypassGovernance bool
}

// removalGuard refuses to remove a locked version.
func (l *Layer) removalGuard(bypass bool) func(v *Version) error {
	return func(v *Version) error {
		if v.Locked(l.now(), bypass) {
			if v.LegalHold == LegalHoldOn {
				return fmt.Errorf("%w: the version is under legal hold", ErrObjectLocked)
			}
			return fmt.Errorf("%w: the version is under %s retention until %s", ErrObjectLocked,
				v.LockMode, time.Unix(0, v.RetainUntil).UTC().Format(time.RFC3339))
		}
		return nil
	}
}

// replicaMayPurge decides whether a peer's purge may remove the local copy
// v: never while a legal hold is on or a compliance retention runs here. A
// governance retention yields: the origin removed it with
// s3:BypassGovernanceRetention (its own check), which is what governance
// means.
func (l *Layer) replicaMayPurge(v *Version) bool {
	return !v.Locked(l.now(), true)
}

// mergeReplicaLock merges the lock of an incoming metadata change into
// cur: a compliance retention that runs here is never shortened or
// dropped by a peer (a peer that would is wrong or hostile), and a legal
// hold is never reset to unset (once set it is ON or OFF; an unset one
// comes from a peer predating object lock).
func (l *Layer) mergeReplicaLock(cur, in *Version) {
	if in.LegalHold != "" {
		cur.LegalHold = in.LegalHold
	}
	if cur.LockMode == LockCompliance && cur.retained(l.now()) &&
		(in.LockMode != LockCompliance || in.RetainUntil < cur.RetainUntil) {
		return
	}
	cur.LockMode, cur.RetainUntil = in.LockMode, in.RetainUntil
}

// mergeLockConfig takes a peer's newer lock configuration, except that
// object lock, once on, is never turned off (no API does that; a peer
// that sends it is wrong or hostile).
func mergeLockConfig(dst, src *Bucket) {
	if src.ObjectLock == nil {
		return
	}
	c := *src.ObjectLock
	dst.ObjectLock = &c
}
