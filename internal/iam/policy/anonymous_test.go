package policy

import (
	"testing"
)

func TestSetAnonymous(t *testing.T) {
	other := []byte(`{"Version":"2012-10-17","Statement":[{"Sid":"mine","Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/*"}]}`)
	doc, err := SetAnonymous(other, "b", "pub/", AnonymousDownload)
	if err != nil {
		t.Fatal(err)
	}
	doc, err = SetAnonymous(doc, "b", "in/", AnonymousUpload)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseBucket(doc)
	if err != nil {
		t.Fatal(err)
	}
	anon := func(action, res string, vals map[string]string) Decision {
		return Evaluate([]*Policy{p}, &Request{Action: action, Resource: res, Anonymous: true, Values: vals})
	}
	for _, c := range []struct {
		action, res string
		vals        map[string]string
		want        Decision
	}{
		{"s3:GetObject", "arn:aws:s3:::b/pub/a", nil, Allow},
		{"s3:GetObject", "arn:aws:s3:::b/other", nil, NoDecision},
		{"s3:ListBucket", "arn:aws:s3:::b", map[string]string{"s3:prefix": "pub/x"}, Allow},
		{"s3:ListBucket", "arn:aws:s3:::b", map[string]string{"s3:prefix": "secret/"}, NoDecision},
		{"s3:PutObject", "arn:aws:s3:::b/in/x", nil, Allow},
		{"s3:PutObject", "arn:aws:s3:::b/pub/x", nil, NoDecision},
		{"s3:DeleteObject", "arn:aws:s3:::b/pub/x", nil, Deny},
	} {
		if got := anon(c.action, c.res, c.vals); got != c.want {
			t.Errorf("%s %s = %v, want %v", c.action, c.res, got, c.want)
		}
	}
	levels, _ := AnonymousLevels(doc)
	if levels["pub/"] != AnonymousDownload || levels["in/"] != AnonymousUpload || len(levels) != 2 {
		t.Fatalf("levels = %v", levels)
	}
	doc, _ = SetAnonymous(doc, "b", "in/", AnonymousPublic)
	if levels, _ = AnonymousLevels(doc); levels["in/"] != AnonymousPublic {
		t.Fatalf("public: %v", levels)
	}
	doc, _ = SetAnonymous(doc, "b", "in/", AnonymousNone)
	doc, _ = SetAnonymous(doc, "b", "pub/", AnonymousNone)
	if levels, _ = AnonymousLevels(doc); len(levels) != 0 {
		t.Fatalf("after none: %v", levels)
	}
	if p, err := ParseBucket(doc); err != nil || Evaluate([]*Policy{p}, &Request{Action: "s3:DeleteObject", Resource: "arn:aws:s3:::b/x", Anonymous: true}) != Deny {
		t.Fatal("the operator's own statement was lost")
	}
	if doc, err := SetAnonymous(nil, "b", "", AnonymousNone); doc != nil || err != nil {
		t.Fatalf("none on nothing = %s, %v", doc, err)
	}
	if _, err := SetAnonymous(nil, "b", "", "everyone"); err == nil {
		t.Fatal("unknown level accepted")
	}
}
