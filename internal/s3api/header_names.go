package s3api

import (
	"net/http"
	"sync"
)

// The handlers name S3's headers as its documentation does, in lower case
// (x-amz-acl). http.Header.Get and Values turn such a name into its
// canonical form (X-Amz-Acl) anew on every call, one allocation each, and
// a PUT looks up some seventy: hget and hvalues look them up under the
// canonical form kept once per name. Only names written in the code go
// through them, never a name from a request, so the cache stays small.

var canonicalNames sync.Map // name -> its canonical form

func canonicalName(name string) string {
	if c, ok := canonicalNames.Load(name); ok {
		return c.(string)
	}
	c := http.CanonicalHeaderKey(name)
	canonicalNames.Store(name, c)
	return c
}

// hget is h.Get(name) for a name written in the code.
func hget(h http.Header, name string) string {
	if vs := h[canonicalName(name)]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// hvalues is h.Values(name) for a name written in the code.
func hvalues(h http.Header, name string) []string {
	return h[canonicalName(name)]
}

// hset is h.Set(name, value) for a name written in the code.
func hset(h http.Header, name, value string) {
	h[canonicalName(name)] = []string{value}
}
