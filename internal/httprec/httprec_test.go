package httprec

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRecorder(t *testing.T) {
	w := httptest.NewRecorder()
	r := &Recorder{ResponseWriter: w}
	r.Write([]byte("abc"))
	r.WriteHeader(http.StatusTeapot) // too late: ignored
	r.Write([]byte("de"))
	if r.Status != http.StatusOK || r.Bytes != 5 || w.Code != http.StatusOK || w.Body.String() != "abcde" {
		t.Fatalf("recorded %d/%d, wrote %d %q", r.Status, r.Bytes, w.Code, w.Body.String())
	}
	r2 := &Recorder{ResponseWriter: httptest.NewRecorder()}
	r2.WriteHeader(http.StatusNotFound)
	r2.WriteHeader(http.StatusOK)
	if r2.Status != http.StatusNotFound || r2.Unwrap() == nil {
		t.Fatalf("status %d", r2.Status)
	}
}
