package app

import (
	"strings"
	"testing"
)

func TestExternalEtcdValidate(t *testing.T) {
	many := make([]string, MaxEtcdEndpoints+1)
	for i := range many {
		many[i] = "http://10.0.0.1:2379"
	}
	tests := []struct {
		name string
		e    ExternalEtcd
		want string // in the error; "" for none
	}{
		{"one", ExternalEtcd{Endpoints: []string{"http://10.0.0.1:2379"}}, ""},
		{"tls with credentials", ExternalEtcd{Endpoints: []string{"https://e1:2379", "https://e2:2379"}, Username: "u", Password: "p"}, ""},
		{"a trailing slash, which the coordinator refuses", ExternalEtcd{Endpoints: []string{"https://e1:2379/"}}, "not an etcd client URL"},
		{"no port", ExternalEtcd{Endpoints: []string{"http://e1"}}, "not an etcd client URL"},
		{"none", ExternalEtcd{}, "0 endpoints"},
		{"too many", ExternalEtcd{Endpoints: many}, "17 endpoints"},
		{"no scheme", ExternalEtcd{Endpoints: []string{"10.0.0.1:2379"}}, "not an etcd client URL"},
		{"other scheme", ExternalEtcd{Endpoints: []string{"unix://x"}}, "not an etcd client URL"},
		{"path", ExternalEtcd{Endpoints: []string{"http://e1:2379/v3"}}, "not an etcd client URL"},
		{"credentials in the URL", ExternalEtcd{Endpoints: []string{"http://u:p@e1:2379"}}, "not an etcd client URL"},
		{"mixed schemes", ExternalEtcd{Endpoints: []string{"http://e1:2379", "https://e2:2379"}}, "all http:// or all https://"},
		{"user without password", ExternalEtcd{Endpoints: []string{"http://e1:2379"}, Username: "u"}, "both"},
		{"a site name", ExternalEtcd{Endpoints: []string{"http://e1:2379"}, Site: "lake-2"}, ""},
		{"a site name with a slash", ExternalEtcd{Endpoints: []string{"http://e1:2379"}, Site: "a/b"}, "--etcd-site"},
		{"a site name with a blank", ExternalEtcd{Endpoints: []string{"http://e1:2379"}, Site: "a b"}, "--etcd-site"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.e.validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("validate: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("validate: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
