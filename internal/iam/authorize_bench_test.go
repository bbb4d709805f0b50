package iam

import (
	"context"
	"fmt"
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

// BenchmarkRebuild measures the snapshot rebuild every IAM change pays: a
// site of 5,000 users, each in one of 50 groups, rebuilt from its records.
func BenchmarkRebuild(b *testing.B) {
	s, err := Open(meta.NewMem(), testRoot, Config{})
	if err != nil {
		b.Fatal(err)
	}
	recs := map[string]*Record{}
	for g := range 50 {
		gr := &Record{Kind: KindGroup, Name: fmt.Sprintf("g%02d", g), Group: &GroupRecord{}}
		for u := g; u < 5000; u += 50 {
			gr.Group.Members = append(gr.Group.Members, fmt.Sprintf("u%04d", u))
		}
		recs[recordKey(KindGroup, gr.Name)] = gr
	}
	for u := range 5000 {
		name := fmt.Sprintf("u%04d", u)
		recs[recordKey(KindUser, name)] = &Record{Kind: KindUser, Name: name,
			User: &UserRecord{SealedSecret: s.seal.seal("secret-"+name, recordKey(KindUser, name))}}
		recs[recordKey(KindUserMap, name)] = &Record{Kind: KindUserMap, Name: name, Mapping: &MappingRecord{Policies: []string{"readonly"}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		s.build(recs, Credential{})
	}
}
