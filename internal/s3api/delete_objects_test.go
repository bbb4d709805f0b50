package s3api_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/twinlake/twinlake/internal/testsite"
)

// TestDeleteObjectsManyKeys: a DeleteObjects request of many keys, which
// the server deletes several at a time, answers every key once, in the
// request's order, with the errors of those it could not delete (versions
// under legal hold) beside the others; a key named twice without a
// version gets two delete markers in the order named; a quiet request
// lists only the errors; and the bucket holds exactly what was not deleted.
func TestDeleteObjectsManyKeys(t *testing.T) {
	site := testsite.Start(t)
	c := sdkClient(site, site.SecretKey)
	ctx := context.Background()
	lockedBucket(t, c, "many")
	const n = 120
	ids := make([]string, n)
	held := func(i int) bool { return i%10 == 3 }
	for i := range n {
		ids[i] = putString(t, c, &s3.PutObjectInput{Bucket: aws.String("many"), Key: aws.String(fmt.Sprintf("k%03d", i))}, "x")
		if held(i) {
			if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: aws.String("many"), Key: aws.String(fmt.Sprintf("k%03d", i)),
				VersionId: aws.String(ids[i]), LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	putString(t, c, &s3.PutObjectInput{Bucket: aws.String("many"), Key: aws.String("twice")}, "x")

	// Every version by ID, newest key first, with "twice" (no version)
	// named twice among them.
	var objs []types.ObjectIdentifier
	for i := n - 1; i >= 0; i-- {
		objs = append(objs, types.ObjectIdentifier{Key: aws.String(fmt.Sprintf("k%03d", i)), VersionId: aws.String(ids[i])})
		if i == 70 || i == 20 {
			objs = append(objs, types.ObjectIdentifier{Key: aws.String("twice")})
		}
	}
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("many"), Delete: &types.Delete{Objects: objs}})
	if err != nil {
		t.Fatal(err)
	}
	var wantDeleted, wantErrors []string
	for _, o := range objs {
		k := aws.ToString(o.Key) + "@" + aws.ToString(o.VersionId)
		var i int
		if _, err := fmt.Sscanf(aws.ToString(o.Key), "k%03d", &i); err == nil && held(i) {
			wantErrors = append(wantErrors, k)
		} else {
			wantDeleted = append(wantDeleted, k)
		}
	}
	var gotDeleted, gotErrors, markers []string
	for _, d := range out.Deleted {
		gotDeleted = append(gotDeleted, aws.ToString(d.Key)+"@"+aws.ToString(d.VersionId))
		if aws.ToString(d.Key) == "twice" {
			if !aws.ToBool(d.DeleteMarker) || aws.ToString(d.DeleteMarkerVersionId) == "" {
				t.Fatalf("delete of twice without a version: %+v", d)
			}
			markers = append(markers, aws.ToString(d.DeleteMarkerVersionId))
		}
	}
	for _, e := range out.Errors {
		gotErrors = append(gotErrors, aws.ToString(e.Key)+"@"+aws.ToString(e.VersionId))
		if aws.ToString(e.Code) != "AccessDenied" {
			t.Fatalf("error for %s: %s %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
		}
	}
	if !slices.Equal(gotDeleted, wantDeleted) {
		t.Fatalf("deleted, in order:\n got %v\nwant %v", gotDeleted, wantDeleted)
	}
	if !slices.Equal(gotErrors, wantErrors) {
		t.Fatalf("errors, in order:\n got %v\nwant %v", gotErrors, wantErrors)
	}
	if len(markers) != 2 || markers[0] == markers[1] {
		t.Fatalf("delete markers of twice: %v", markers)
	}

	// What is left: the held versions, and "twice" with its version under
	// two delete markers, the later one the latest.
	lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("many")})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, v := range lv.Versions {
		left = append(left, aws.ToString(v.Key)+"@"+aws.ToString(v.VersionId))
	}
	var wantLeft []string
	for i := range n {
		if held(i) {
			wantLeft = append(wantLeft, fmt.Sprintf("k%03d@%s", i, ids[i]))
		}
	}
	if len(left) != len(wantLeft)+1 || !slices.Equal(left[:len(wantLeft)], wantLeft) || lv.Versions[len(wantLeft)].Key == nil ||
		aws.ToString(lv.Versions[len(wantLeft)].Key) != "twice" {
		t.Fatalf("versions left:\n got %v\nwant %v and twice", left, wantLeft)
	}
	if len(lv.DeleteMarkers) != 2 {
		t.Fatalf("delete markers left: %+v", lv.DeleteMarkers)
	}
	for _, m := range lv.DeleteMarkers {
		latest := aws.ToString(m.VersionId) == markers[1]
		if aws.ToBool(m.IsLatest) != latest {
			t.Fatalf("delete marker %s latest=%v, the second named is %s", aws.ToString(m.VersionId), aws.ToBool(m.IsLatest), markers[1])
		}
	}

	// Quiet: the held versions' errors only.
	objs = objs[:0]
	for i := range n {
		if held(i) {
			objs = append(objs, types.ObjectIdentifier{Key: aws.String(fmt.Sprintf("k%03d", i)), VersionId: aws.String(ids[i])})
		}
	}
	objs = append(objs, types.ObjectIdentifier{Key: aws.String("twice"), VersionId: aws.String(markers[0])})
	out, err = c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("many"), Delete: &types.Delete{Objects: objs, Quiet: aws.Bool(true)}})
	if err != nil || len(out.Deleted) != 0 || len(out.Errors) != len(objs)-1 {
		t.Fatalf("quiet delete: %d deleted, %d errors, %v", len(out.Deleted), len(out.Errors), err)
	}
}
