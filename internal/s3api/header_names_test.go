package s3api

import (
	"net/http"
	"slices"
	"testing"
)

// hget and hvalues answer as http.Header's Get and Values do, whatever the
// case a name is written in, and once a name is known they allocate
// nothing.
func TestHeaderLookupsByName(t *testing.T) {
	h := http.Header{}
	h.Add("X-Amz-Acl", "private")
	h.Add("x-amz-grant-read", "id=a")
	h.Add("X-AMZ-GRANT-READ", "id=b")
	h.Set("Content-Type", "text/plain")
	for _, name := range []string{"x-amz-acl", "X-Amz-Acl", "x-amz-grant-read", "content-type", "Content-Type", "x-amz-missing", "bad name"} {
		if got, want := hget(h, name), h.Get(name); got != want {
			t.Errorf("hget(%q) = %q, want %q", name, got, want)
		}
		if got, want := hvalues(h, name), h.Values(name); !slices.Equal(got, want) {
			t.Errorf("hvalues(%q) = %q, want %q", name, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		hget(h, "x-amz-acl")
		hvalues(h, "x-amz-grant-read")
	}); n != 0 {
		t.Errorf("%v allocations a lookup", n)
	}
}

// A stored checksum is answered under its algorithm's canonical header
// name, kept once, with the type beside it: a response pays for the two
// value slices alone, not for building and canonicalising the names.
func TestChecksumHeadersByName(t *testing.T) {
	sums := map[string]string{"CRC64NVME": "AAAAAAAAAAA="}
	h := http.Header{}
	setChecksumHeaders(h, sums)
	if h.Get("x-amz-checksum-crc64nvme") != "AAAAAAAAAAA=" || h.Get("x-amz-checksum-type") != "FULL_OBJECT" || len(h) != 2 {
		t.Fatalf("headers %v", h)
	}
	if n := testing.AllocsPerRun(100, func() { setChecksumHeaders(h, sums) }); n > 2 {
		t.Errorf("%v allocations to answer a checksum", n)
	}
}
