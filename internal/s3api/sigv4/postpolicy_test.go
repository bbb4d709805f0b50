package sigv4

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestVerifyPost checks the form signatures of POST uploads: SigV4 over
// the base64 policy with the scope's signing key, SigV2 over it with the
// secret, and each refusal's sentinel.
func TestVerifyPost(t *testing.T) {
	v := newTestVerifier(testTime())
	const policy = "eyJleHBpcmF0aW9uIjoiMjAzMC0wMS0wMVQwMDowMDowMFoiLCJjb25kaXRpb25zIjpbXX0="
	date := "20260314T150926Z"
	v4 := func(mut func(*PostForm)) PostForm {
		f := PostForm{
			Policy: policy, Algorithm: algorithm, Date: date,
			Credential: exampleAccessKey + "/20260314/eu-west-3/s3/aws4_request",
			Signature:  SignPostPolicy(exampleSecret, "20260314", "eu-west-3", policy),
		}
		if mut != nil {
			mut(&f)
		}
		return f
	}
	res, err := v.VerifyPost(v4(nil))
	if err != nil || res.AccessKey != exampleAccessKey || res.Region != "eu-west-3" || res.Anonymous || !res.SignedAt.Equal(testTime()) {
		t.Fatalf("SigV4 form: %+v %v", res, err)
	}
	res, err = v.VerifyPost(PostForm{Policy: policy, AccessKeyID: exampleAccessKey, SignatureV2: v2Sign(exampleSecret, policy)})
	if err != nil || res.AccessKey != exampleAccessKey {
		t.Fatalf("SigV2 form: %+v %v", res, err)
	}
	if res, err := v.VerifyPost(PostForm{Policy: policy}); err != nil || !res.Anonymous {
		t.Fatalf("unsigned form: %+v %v", res, err)
	}
	for _, tc := range []struct {
		name string
		form PostForm
		want error
	}{
		{"policy changed", v4(func(f *PostForm) { f.Policy = strings.ToLower(f.Policy) }), ErrSignatureDoesNotMatch},
		{"other region's key", v4(func(f *PostForm) { f.Signature = SignPostPolicy(exampleSecret, "20260314", "us-east-1", policy) }), ErrSignatureDoesNotMatch},
		{"unknown key", v4(func(f *PostForm) { f.Credential = "NOBODY/20260314/eu-west-3/s3/aws4_request" }), ErrInvalidAccessKeyID},
		{"no policy", v4(func(f *PostForm) { f.Policy = "" }), ErrMalformedPOST},
		{"no algorithm", v4(func(f *PostForm) { f.Algorithm = "" }), ErrMalformedPOST},
		{"other algorithm", v4(func(f *PostForm) { f.Algorithm = "AWS4-ECDSA-P256-SHA256" }), ErrUnsupportedAlgorithm},
		{"service not s3", v4(func(f *PostForm) { f.Credential = exampleAccessKey + "/20260314/eu-west-3/iam/aws4_request" }), ErrMalformedPOST},
		{"date not the scope's", v4(func(f *PostForm) { f.Date = "20260315T000000Z" }), ErrMalformedPOST},
		{"bad date", v4(func(f *PostForm) { f.Date = "2026-03-14" }), ErrMalformedPOST},
		{"signature not hex", v4(func(f *PostForm) { f.Signature = "xyz" }), ErrMalformedPOST},
		{"token without sessions", v4(func(f *PostForm) { f.SecurityToken = "t" }), ErrInvalidToken},
		{"both versions", v4(func(f *PostForm) { f.AccessKeyID = exampleAccessKey }), ErrMultipleAuthMechanisms},
		{"SigV2 wrong", PostForm{Policy: policy, AccessKeyID: exampleAccessKey, SignatureV2: v2Sign("other", policy)}, ErrSignatureDoesNotMatch},
		{"SigV2 no signature", PostForm{Policy: policy, AccessKeyID: exampleAccessKey}, ErrMalformedPOST},
	} {
		if _, err := v.VerifyPost(tc.form); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// The clock is the policy's business: a form signed long ago still
	// verifies (its policy's expiration is checked by the caller).
	old := newTestVerifier(testTime().Add(30 * 24 * time.Hour))
	if _, err := old.VerifyPost(v4(nil)); err != nil {
		t.Fatalf("old form: %v", err)
	}
}
