package s3api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/minio/minio-go/v7"

	"github.com/twinlake/twinlake/internal/testsite"
)

// lockedBucket creates a bucket with object lock through aws-sdk-go-v2.
func lockedBucket(t *testing.T, c *s3.Client, name string) {
	t.Helper()
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
}

func putString(t *testing.T, c *s3.Client, in *s3.PutObjectInput, body string) string {
	t.Helper()
	in.Body = strings.NewReader(body)
	out, err := c.PutObject(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.VersionId)
}

func deleteVersion(c *s3.Client, bucket, key, id string, bypass bool) error {
	in := &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(id)}
	if bypass {
		in.BypassGovernanceRetention = aws.Bool(true)
	}
	_, err := c.DeleteObject(context.Background(), in)
	return err
}

// TestObjectLockBucket: CreateBucket with object lock makes a versioned
// bucket whose versioning cannot be suspended; Get/PutObjectLockConfiguration
// validate as S3 and its conformance suite expect.
func TestObjectLockBucket(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	lockedBucket(t, c, "worm")
	mustCreateBucket(t, c, "plain")

	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String("worm")})
	if err != nil || v.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("versioning of a bucket with object lock: %+v %v", v, err)
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("worm"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); apiCode(err) != "InvalidBucketState" {
		t.Fatalf("suspend versioning: %v", err)
	}
	cfg, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("worm")})
	if err != nil || cfg.ObjectLockConfiguration.ObjectLockEnabled != types.ObjectLockEnabledEnabled || cfg.ObjectLockConfiguration.Rule != nil {
		t.Fatalf("lock configuration of a new bucket: %+v %v", cfg, err)
	}
	if _, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("plain")}); apiCode(err) != "ObjectLockConfigurationNotFoundError" {
		t.Fatalf("lock configuration of a bucket without: %v", err)
	}

	rc := rawClient{t, site}
	conf := func(enabled, rule string) []byte {
		return []byte(`<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>` + enabled + `</ObjectLockEnabled>` + rule + `</ObjectLockConfiguration>`)
	}
	rule := func(inner string) string { return `<Rule><DefaultRetention>` + inner + `</DefaultRetention></Rule>` }
	for _, tc := range []struct {
		name   string
		bucket string
		body   []byte
		status int
		code   string
	}{
		{"days and years", "worm", conf("Enabled", rule(`<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>`)), 400, "MalformedXML"},
		{"zero days", "worm", conf("Enabled", rule(`<Mode>GOVERNANCE</Mode><Days>0</Days>`)), 400, "InvalidRetentionPeriod"},
		{"negative years", "worm", conf("Enabled", rule(`<Mode>GOVERNANCE</Mode><Years>-1</Years>`)), 400, "InvalidRetentionPeriod"},
		{"lower-case mode", "worm", conf("Enabled", rule(`<Mode>governance</Mode><Days>1</Days>`)), 400, "MalformedXML"},
		{"unknown mode", "worm", conf("Enabled", rule(`<Mode>abc</Mode><Days>1</Days>`)), 400, "MalformedXML"},
		{"disabled", "worm", conf("Disabled", rule(`<Mode>GOVERNANCE</Mode><Days>1</Days>`)), 400, "MalformedXML"},
		{"no period", "worm", conf("Enabled", rule(`<Mode>GOVERNANCE</Mode>`)), 400, "MalformedXML"},
		{"unversioned bucket", "plain", conf("Enabled", rule(`<Mode>GOVERNANCE</Mode><Days>1</Days>`)), 409, "InvalidBucketState"},
		{"valid", "worm", conf("Enabled", rule(`<Mode>COMPLIANCE</Mode><Years>2</Years>`)), 200, ""},
	} {
		st, code := rc.do(rawRequest{method: http.MethodPut, target: "/" + tc.bucket + "?object-lock", body: tc.body})
		if st != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, st, code, tc.status, tc.code)
		}
	}
	cfg, err = c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("worm")})
	if err != nil || cfg.ObjectLockConfiguration.Rule == nil || cfg.ObjectLockConfiguration.Rule.DefaultRetention.Mode != types.ObjectLockRetentionModeCompliance ||
		aws.ToInt32(cfg.ObjectLockConfiguration.Rule.DefaultRetention.Years) != 2 || cfg.ObjectLockConfiguration.Rule.DefaultRetention.Days != nil {
		t.Fatalf("stored configuration: %+v %v", cfg.ObjectLockConfiguration, err)
	}

	// A versioned bucket may turn object lock on afterwards (as AWS allows),
	// and then cannot suspend versioning.
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("plain"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("plain"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String("plain"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}}); apiCode(err) != "InvalidBucketState" {
		t.Fatalf("suspend after enabling object lock: %v", err)
	}
}

// TestObjectLockRetention: compliance cannot be shortened, changed or
// deleted; governance only with bypass; legal hold blocks a delete until
// cleared; the default retention applies to new versions; the lock shows on
// HEAD and GET; a delete without a version ID only adds a delete marker; a
// bucket holding locked versions cannot be deleted.
func TestObjectLockRetention(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	lockedBucket(t, c, "worm")
	future := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	later := future.Add(24 * time.Hour)
	sooner := future.Add(-time.Hour)

	for _, tc := range []struct {
		name string
		mode types.ObjectLockMode
		// after the lock is set: each change and whether it is refused
		shorten, shortenBypass, toOther, extend, deleteNoBypass, deleteBypass string
	}{
		{name: "compliance", mode: types.ObjectLockModeCompliance,
			shorten: "AccessDenied", shortenBypass: "AccessDenied", toOther: "AccessDenied", extend: "",
			deleteNoBypass: "AccessDenied", deleteBypass: "AccessDenied"},
		{name: "governance", mode: types.ObjectLockModeGovernance,
			shorten: "AccessDenied", shortenBypass: "", toOther: "AccessDenied", extend: "",
			deleteNoBypass: "AccessDenied", deleteBypass: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "obj-" + tc.name
			id := putString(t, c, &s3.PutObjectInput{Bucket: aws.String("worm"), Key: aws.String(key),
				ObjectLockMode: tc.mode, ObjectLockRetainUntilDate: aws.Time(future)}, "data")
			h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("worm"), Key: aws.String(key)})
			if err != nil || h.ObjectLockMode != tc.mode || !aws.ToTime(h.ObjectLockRetainUntilDate).Equal(future) {
				t.Fatalf("HEAD lock headers: %v %v %v", h.ObjectLockMode, h.ObjectLockRetainUntilDate, err)
			}
			setRet := func(mode types.ObjectLockRetentionMode, until time.Time, bypass bool) error {
				in := &s3.PutObjectRetentionInput{Bucket: aws.String("worm"), Key: aws.String(key), VersionId: aws.String(id),
					Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: aws.Time(until)}}
				if bypass {
					in.BypassGovernanceRetention = aws.Bool(true)
				}
				_, err := c.PutObjectRetention(ctx, in)
				return err
			}
			same := types.ObjectLockRetentionMode(tc.mode)
			other := types.ObjectLockRetentionModeGovernance
			if same == other {
				other = types.ObjectLockRetentionModeCompliance
			}
			for _, step := range []struct {
				what string
				err  error
				want string
			}{
				{"shorten", setRet(same, sooner, false), tc.shorten},
				{"change mode", setRet(other, later, false), tc.toOther},
				{"delete", deleteVersion(c, "worm", key, id, false), tc.deleteNoBypass},
				{"extend", setRet(same, later, false), tc.extend},
			} {
				if apiCode(step.err) != step.want {
					t.Fatalf("%s: %v, want %q", step.what, step.err, step.want)
				}
			}
			r, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("worm"), Key: aws.String(key), VersionId: aws.String(id)})
			if err != nil || r.Retention.Mode != same || !aws.ToTime(r.Retention.RetainUntilDate).Equal(later) {
				t.Fatalf("retention after extending: %+v %v", r.Retention, err)
			}
			if err := setRet(same, sooner, true); apiCode(err) != tc.shortenBypass {
				t.Fatalf("shorten with bypass: %v, want %q", err, tc.shortenBypass)
			}
			// Without a version ID a delete adds a marker; the data stays.
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("worm"), Key: aws.String(key)}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("worm"), Key: aws.String(key), VersionId: aws.String(id)}); err != nil {
				t.Fatalf("locked version after a delete marker: %v", err)
			}
			if err := deleteVersion(c, "worm", key, id, true); apiCode(err) != tc.deleteBypass {
				t.Fatalf("delete with bypass: %v, want %q", err, tc.deleteBypass)
			}
		})
	}

	// Legal hold blocks a delete, even with bypass, until cleared.
	id := putString(t, c, &s3.PutObjectInput{Bucket: aws.String("worm"), Key: aws.String("held"), ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn}, "x")
	g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("worm"), Key: aws.String("held")})
	if err != nil || g.ObjectLockLegalHoldStatus != types.ObjectLockLegalHoldStatusOn || g.ObjectLockMode != "" {
		t.Fatalf("GET lock headers: %+v %v", g, err)
	}
	g.Body.Close()
	if _, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("worm"), Key: aws.String("held")}); apiCode(err) != "NoSuchObjectLockConfiguration" {
		t.Fatalf("retention of a version without: %v", err)
	}
	if err := deleteVersion(c, "worm", "held", id, true); apiCode(err) != "AccessDenied" {
		t.Fatalf("delete under legal hold: %v", err)
	}
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("worm"), BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("held"), VersionId: aws.String(id)}}}})
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].Code) != "AccessDenied" || len(out.Deleted) != 0 {
		t.Fatalf("DeleteObjects under legal hold: %+v %v", out, err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("worm")}); apiCode(err) != "BucketNotEmpty" {
		t.Fatalf("delete of a bucket holding locked versions: %v", err)
	}
	if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: aws.String("worm"), Key: aws.String("held"),
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
		t.Fatal(err)
	}
	lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String("worm"), Key: aws.String("held")})
	if err != nil || lh.LegalHold.Status != types.ObjectLockLegalHoldStatusOff {
		t.Fatalf("legal hold after clearing: %+v %v", lh, err)
	}
	if err := deleteVersion(c, "worm", "held", id, false); err != nil {
		t.Fatalf("delete after the legal hold is cleared: %v", err)
	}

	// Default retention: applied to new versions (a simple PUT, a multipart
	// upload, a copy), overridden by a retention of the write's own.
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("worm"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(2)}}}}); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	putString(t, c, &s3.PutObjectInput{Bucket: aws.String("worm"), Key: aws.String("dflt")}, "d")
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("worm"), Key: aws.String("dflt-mp")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("worm"), Key: aws.String("dflt-mp"), UploadId: mp.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("p")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("worm"), Key: aws.String("dflt-mp"), UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("worm"), Key: aws.String("dflt-copy"), CopySource: aws.String("worm/dflt")}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"dflt", "dflt-mp", "dflt-copy"} {
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("worm"), Key: aws.String(k)})
		if err != nil {
			t.Fatal(err)
		}
		until := aws.ToTime(h.ObjectLockRetainUntilDate)
		if h.ObjectLockMode != types.ObjectLockModeGovernance || until.Before(before.Add(48*time.Hour-time.Second)) || until.After(time.Now().Add(48*time.Hour)) {
			t.Fatalf("%s: default retention not applied: %v until %v", k, h.ObjectLockMode, until)
		}
		if err := deleteVersion(c, "worm", k, aws.ToString(h.VersionId), false); apiCode(err) != "AccessDenied" {
			t.Fatalf("%s: delete under default retention: %v", k, err)
		}
	}
	putString(t, c, &s3.PutObjectInput{Bucket: aws.String("worm"), Key: aws.String("own"), ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: aws.Time(future)}, "o")
	if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("worm"), Key: aws.String("own")}); err != nil || h.ObjectLockMode != types.ObjectLockModeCompliance || !aws.ToTime(h.ObjectLockRetainUntilDate).Equal(future) {
		t.Fatalf("a write's own retention over the default: %+v %v", h, err)
	}

	// A retention that expires lets the version go (a short one, set with
	// minio-go's own verbs).
	mc, _ := minioClient(t, site)
	soon := time.Now().Add(2 * time.Second).UTC()
	mode := minio.Compliance
	info, err := mc.PutObject(ctx, "worm", "short", strings.NewReader("s"), 1, minio.PutObjectOptions{Mode: mode, RetainUntilDate: soon})
	if err != nil {
		t.Fatal(err)
	}
	gotMode, gotUntil, err := mc.GetObjectRetention(ctx, "worm", "short", info.VersionID)
	if err != nil || gotMode == nil || *gotMode != minio.Compliance || gotUntil == nil {
		t.Fatalf("minio-go GetObjectRetention: %v %v %v", gotMode, gotUntil, err)
	}
	if err := mc.RemoveObject(ctx, "worm", "short", minio.RemoveObjectOptions{VersionID: info.VersionID}); apiCodeMinio(err) != "AccessDenied" {
		t.Fatalf("minio-go remove before expiry: %v", err)
	}
	time.Sleep(time.Until(soon) + 100*time.Millisecond)
	if err := mc.RemoveObject(ctx, "worm", "short", minio.RemoveObjectOptions{VersionID: info.VersionID}); err != nil {
		t.Fatalf("remove after expiry: %v", err)
	}
}

func apiCodeMinio(err error) string {
	if err == nil {
		return ""
	}
	return minio.ToErrorResponse(err).Code
}

// TestObjectLockBypassNeedsPermission: x-amz-bypass-governance-retention
// from a caller without s3:BypassGovernanceRetention bypasses nothing; the
// same request from one allowed it does.
func TestObjectLockBypassNeedsPermission(t *testing.T) {
	site := testsite.Start(t)
	root := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	lockedBucket(t, root, "worm")
	adm := rootAdmin(t, site)
	base := `"s3:GetObject","s3:PutObject","s3:DeleteObject","s3:DeleteObjectVersion","s3:GetObjectRetention","s3:PutObjectRetention"`
	for name, actions := range map[string]string{"nobypass": base, "bypass": base + `,"s3:BypassGovernanceRetention"`} {
		if err := adm.CreatePolicy(ctx, name, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":[`+actions+`],"Resource":["arn:aws:s3:::worm/*"]}]}`)); err != nil {
			t.Fatal(err)
		}
	}
	plain := createUser(t, site, "plainuser", "plainuser-secret", "nobypass")
	admin := createUser(t, site, "bypassuser", "bypassuser-secret", "bypass")
	until := time.Now().Add(time.Hour).UTC()
	for _, tc := range []struct {
		who     string
		c       *s3.Client
		wantDel string
		wantRet string
	}{
		{"without s3:BypassGovernanceRetention", plain, "AccessDenied", "AccessDenied"},
		{"with s3:BypassGovernanceRetention", admin, "", ""},
	} {
		id := putString(t, root, &s3.PutObjectInput{Bucket: aws.String("worm"), Key: aws.String("g"), ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(until)}, "g")
		_, err := tc.c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("worm"), Key: aws.String("g"), VersionId: aws.String(id),
			BypassGovernanceRetention: aws.Bool(true), Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: aws.Time(until.Add(-time.Minute))}})
		if apiCode(err) != tc.wantRet {
			t.Errorf("%s: shorten with bypass: %v, want %q", tc.who, err, tc.wantRet)
		}
		if err := deleteVersion(tc.c, "worm", "g", id, true); apiCode(err) != tc.wantDel {
			t.Errorf("%s: delete with bypass: %v, want %q", tc.who, err, tc.wantDel)
		}
	}
	// Asking for a retention on a write needs s3:PutObjectRetention.
	if err := adm.CreatePolicy(ctx, "putonly", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject"],"Resource":["arn:aws:s3:::worm/*"]}]}`)); err != nil {
		t.Fatal(err)
	}
	putter := createUser(t, site, "putter", "putter-secret", "putonly")
	if _, err := putter.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("worm"), Key: aws.String("p"), Body: strings.NewReader("p"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: aws.Time(until)}); apiCode(err) != "AccessDenied" {
		t.Fatalf("retention on a write without s3:PutObjectRetention: %v", err)
	}
}
