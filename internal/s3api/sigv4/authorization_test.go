package sigv4

import (
	"reflect"
	"strings"
	"testing"
)

const validSig = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"

func TestParseAuthorization(t *testing.T) {
	cred := "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"
	cases := []struct {
		name, header string
		want         error
	}{
		{"comma space", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host;range;x-amz-date, Signature=" + validSig, nil},
		{"comma only", "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host,Signature=" + validSig, nil},
		{"any order", "AWS4-HMAC-SHA256 Signature=" + validSig + ", SignedHeaders=host, " + cred, nil},
		{"slash in key", "AWS4-HMAC-SHA256 Credential=a/b/20130524/r/s3/aws4_request,SignedHeaders=host,Signature=" + validSig, nil},
		{"empty", "", ErrAuthorizationHeaderMalformed},
		{"v2", "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=", ErrUnsupportedAlgorithm},
		{"v4a", "AWS4-ECDSA-P256-SHA256 " + cred, ErrUnsupportedAlgorithm},
		{"bearer", "Bearer token", ErrUnsupportedAlgorithm},
		{"no components", "AWS4-HMAC-SHA256 ", ErrAuthorizationHeaderMalformed},
		{"missing signature", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host", ErrAuthorizationHeaderMalformed},
		{"repeated component", "AWS4-HMAC-SHA256 " + cred + ", " + cred + ", SignedHeaders=host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"unknown component", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host, Signature=" + validSig + ", Foo=bar", ErrAuthorizationHeaderMalformed},
		{"trailing comma tolerated", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host, Signature=" + validSig + ",", nil},
		{"no host", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=x-amz-date, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"upper-case header", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=Host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"repeated header", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host;host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"empty header name", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host;;a, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"short signature", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host, Signature=" + validSig[1:], ErrAuthorizationHeaderMalformed},
		{"upper-case signature", "AWS4-HMAC-SHA256 " + cred + ", SignedHeaders=host, Signature=" + strings.ToUpper(validSig), ErrAuthorizationHeaderMalformed},
		{"bad terminator", "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws5_request, SignedHeaders=host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"bad date", "AWS4-HMAC-SHA256 Credential=AK/2013052/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"empty region", "AWS4-HMAC-SHA256 Credential=AK/20130524//s3/aws4_request, SignedHeaders=host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"empty key", "AWS4-HMAC-SHA256 Credential=/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
		{"short credential", "AWS4-HMAC-SHA256 Credential=20130524/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=" + validSig, ErrAuthorizationHeaderMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := parseAuthorization(c.header)
			wantErr(t, err, c.want)
			if err == nil && (a.signature != validSig || !a.signs("host") || a.scope.date != "20130524") {
				t.Fatalf("parsed %+v", a)
			}
		})
	}
	a, _ := parseAuthorization("AWS4-HMAC-SHA256 Credential=a/b/20130524/r/s3/aws4_request,SignedHeaders=host;x-amz-date,Signature=" + validSig)
	want := authorization{accessKey: "a/b", scope: scope{"20130524", "r", "s3"}, signedHeaders: []string{"host", "x-amz-date"}, signature: validSig}
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("parsed %+v, want %+v", a, want)
	}
}

// formatAuthorization is the inverse of parseAuthorization.
func formatAuthorization(a authorization) string {
	return "AWS4-HMAC-SHA256 Credential=" + a.accessKey + "/" + a.scope.String() +
		", SignedHeaders=" + strings.Join(a.signedHeaders, ";") + ", Signature=" + a.signature
}
