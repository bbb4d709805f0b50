package rest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzSignTarget: whatever the URL and method, the sign endpoint's checks
// never panic, and a request they allow touches only the table: an object
// under its prefix (a write only under its own), or a listing of a prefix
// there.
func FuzzSignTarget(f *testing.F) {
	for _, s := range []struct{ method, uri string }{
		{"GET", "http://127.0.0.1:9000/lake/ns/t-1/metadata/v1.json"},
		{"PUT", "http://127.0.0.1:9000/lake/ns/t-1/data/x.parquet"},
		{"GET", "http://lake.example.com/ns/t-1/data/x"},
		{"GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=ns/t-1/"},
		{"GET", "http://127.0.0.1:9000/lake?list-type=2&prefix=ns/"},
		{"DELETE", "http://127.0.0.1:9000/lake/ns/t-2/x"},
		{"POST", "http://127.0.0.1:9000/lake?delete"},
		{"GET", "http://127.0.0.1:9000/other/ns/t-1/x"},
		{"GET", "http://127.0.0.1:9000/lake/ns/t-1"},
	} {
		f.Add(s.method, s.uri)
	}
	own := []s3Prefix{{"lake", "ns/t-1"}}
	foreign := []s3Prefix{{"lake", "ns/src"}}
	f.Fuzz(func(t *testing.T, method, uri string) {
		u, err := url.Parse(uri)
		if err != nil {
			return
		}
		method = strings.ToUpper(method)
		tgt, err := parseSignTarget(u, method, own)
		if err != nil {
			return
		}
		if checkSignTarget(tgt, own, foreign, signRequest{Method: method, URI: uri}) != nil {
			return
		}
		switch {
		case tgt.bucket != "lake":
			t.Fatalf("%s %s: allowed in bucket %q", method, uri, tgt.bucket)
		case tgt.key == "" && (tgt.write || !strings.HasPrefix(tgt.query.Get("prefix"), "ns/t-1") && !strings.HasPrefix(tgt.query.Get("prefix"), "ns/src")):
			t.Fatalf("%s %s: bucket-level request allowed", method, uri)
		case tgt.key != "" && tgt.write && !strings.HasPrefix(tgt.key, "ns/t-1/"):
			t.Fatalf("%s %s: write to %q allowed", method, uri, tgt.key)
		case tgt.key != "" && !strings.HasPrefix(tgt.key, "ns/t-1/") && !strings.HasPrefix(tgt.key, "ns/src/"):
			t.Fatalf("%s %s: read of %q allowed", method, uri, tgt.key)
		case tgt.write != (method == http.MethodPut || method == http.MethodPost || method == http.MethodDelete):
			t.Fatalf("%s %s: write=%v", method, uri, tgt.write)
		}
	})
}
