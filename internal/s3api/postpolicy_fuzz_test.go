package s3api

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"
)

// FuzzPostPolicy feeds arbitrary policy documents to the POST policy
// parser and checker: each must answer a 4xx S3 error or a policy that can
// be checked against a form, never panic.
func FuzzPostPolicy(f *testing.F) {
	for _, seed := range []string{
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key",""],["content-length-range",1,10]]}`,
		`{"expiration":"2030-01-01T00:00:00.000Z","conditions":[["eq","$x-amz-meta-a","1"],{"acl":"private"}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range","5",-1]]}`,
		`{"EXPIRATION":"x","CONDITIONS":[]}`,
		`[]`, ``, `{"expiration":1}`,
	} {
		f.Add([]byte(seed))
	}
	form := &postForm{names: []string{"key", "x-amz-meta-a"}, values: map[string]string{"key": "k", "x-amz-meta-a": "1"}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := parsePostPolicy(base64.StdEncoding.EncodeToString(doc))
		if err == nil {
			if p.lengthSet && (p.min < 0 || p.max < p.min) {
				t.Fatalf("range %d..%d accepted", p.min, p.max)
			}
			err = p.check(form, "b", "k", now)
		}
		var ae *APIError
		if err != nil && (!errors.As(err, &ae) || ae.Status < 400 || ae.Status >= 500) {
			t.Fatalf("%q: %v", doc, err)
		}
	})
}
