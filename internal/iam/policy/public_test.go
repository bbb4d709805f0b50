package policy

import "testing"

func TestIsPublic(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*"}]}`, true},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::b"}]}`, true},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["alice"]},"Action":"s3:*","Resource":"arn:aws:s3:::b/*"}]}`, false},
		{`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}`, false},
	} {
		p, err := ParseBucket([]byte(tc.doc))
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if got := p.IsPublic(); got != tc.want {
			t.Errorf("IsPublic(%s) = %v, want %v", tc.doc, got, tc.want)
		}
	}
}
