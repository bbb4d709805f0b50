package policy

import (
	"errors"
	"testing"
)

// FuzzParsePolicy checks that any input either parses into a policy that
// evaluates without panicking, or fails with a located ErrInvalidPolicy.
func FuzzParsePolicy(f *testing.F) {
	for _, doc := range []string{homeDirPolicy, sourceIPPolicy, datesPolicy, requireSSEPolicy,
		maxKeysPolicy, notActionPolicy, notResourcePolicy, oldVersionPolicy, `{}`, `[]`} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) (*Policy, error){Parse, ParseBucket} {
			p, err := parse(data)
			if err != nil {
				if !errors.Is(err, ErrInvalidPolicy) {
					t.Fatalf("error %v does not match ErrInvalidPolicy", err)
				}
				continue
			}
			Evaluate([]*Policy{p}, &Request{Action: "s3:GetObject", Resource: "arn:aws:s3:::b/k", Username: "u",
				Values: map[string]string{"s3:prefix": "a"}})
			Evaluate([]*Policy{p}, &Request{Action: "admin:ServerInfo", Resource: "*", Anonymous: true})
		}
	})
}
