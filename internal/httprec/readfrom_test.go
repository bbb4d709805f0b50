package httprec

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A body copied through the recorder reaches the underlying writer's
// ReadFrom (sendfile in net/http) and is still counted, with the status.
func TestRecorderReadFrom(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &Recorder{ResponseWriter: w}
		if _, ok := any(rec).(io.ReaderFrom); !ok {
			t.Error("Recorder is no io.ReaderFrom")
		}
		n, err := io.Copy(rec, strings.NewReader(strings.Repeat("x", 100000)))
		if err != nil || n != 100000 || rec.Bytes != 100000 || rec.Status != http.StatusOK {
			t.Errorf("copied %d, %v; recorded %d bytes, status %d", n, err, rec.Bytes, rec.Status)
		}
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if len(body) != 100000 {
		t.Errorf("client got %d bytes", len(body))
	}
}
