package iam

import (
	"context"
	"testing"

	"github.com/twinlake/twinlake/internal/iam/policy"
	"github.com/twinlake/twinlake/internal/meta"
)

// BenchmarkAuthorize measures what the S3 edge pays per request for a user
// whose rights come through a group, with a bucket policy present: one
// snapshot lookup and evaluation of compiled policies, nothing parsed.
func BenchmarkAuthorize(b *testing.B) {
	ctx := context.Background()
	s, err := Open(meta.NewMem(), testRoot, Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.AddUser(ctx, "bench", "benchsecret"); err != nil {
		b.Fatal(err)
	}
	if err := s.PutPolicy(ctx, "team", []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::b/*"}]}`)); err != nil {
		b.Fatal(err)
	}
	s.AddGroupMembers(ctx, "team-g", []string{"bench"})
	if err := s.Attach(ctx, Entity{Group: "team-g"}, []string{"team"}); err != nil {
		b.Fatal(err)
	}
	s.Attach(ctx, Entity{User: "bench"}, []string{"readonly"})
	var cache policy.BucketCache
	doc := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/locked/*"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		bp, _ := cache.Get("b", doc)
		r := &policy.Request{Action: "s3:PutObject", Resource: "arn:aws:s3:::b/" + "some/key"}
		if !s.Authorize("bench", bp, r) {
			b.Fatal("denied")
		}
	}
}
