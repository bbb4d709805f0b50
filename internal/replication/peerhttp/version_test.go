package peerhttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/twinlake/twinlake/internal/objects"
	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/replication/peerwire"
)

// fakePeer answers every call with an "applied" outcome, or as refuse says,
// and records the protocol version each call claimed.
type fakePeer struct {
	mu      sync.Mutex
	claimed []string
	answer  string // the Header value it answers with ("": none, as version 1)
	refuse  func(claimed string) bool
}

func (f *fakePeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.claimed = append(f.claimed, r.Header.Get(peerwire.Header))
	f.mu.Unlock()
	if f.answer != "" {
		w.Header().Set(peerwire.Header, f.answer)
	}
	if f.refuse != nil && f.refuse(r.Header.Get(peerwire.Header)) {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(peerwire.Error{Code: peerwire.CodeIncompatible, Message: "refused " + r.Header.Get(peerwire.Header)})
		return
	}
	_ = json.NewEncoder(w).Encode(peerwire.Outcome{Outcome: "applied"})
}

func (f *fakePeer) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.claimed...)
}

func fakeClient(t *testing.T, f *fakePeer) *Client {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, replication.Credentials{AccessKey: "ak", SecretKey: "sk"}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func purge(c *Client) error {
	_, err := c.SendPurge(context.Background(), "b", "k", "v", 1, objects.PurgeVersion)
	return err
}

// TestClientSpeaksThePeersVersion: a client claims its own version first,
// then the lower of its own and the one the peer answers with (a peer that
// answers without the header speaks version 1).
func TestClientSpeaksThePeersVersion(t *testing.T) {
	for _, tc := range []struct{ answer, then string }{
		{"", "1"}, {"1", "1"}, {"2", "2"}, {"3", "2"},
	} {
		f := &fakePeer{answer: tc.answer}
		c := fakeClient(t, f)
		for range 2 {
			if err := purge(c); err != nil {
				t.Fatalf("answer %q: %v", tc.answer, err)
			}
		}
		if got := f.calls(); got[0] != "2" || got[1] != tc.then {
			t.Errorf("answer %q: claimed %v, want 2 then %s", tc.answer, got, tc.then)
		}
	}
}

// TestClientTalksDown: a peer that refuses this site's version but names
// an older one this site speaks gets the call again in that version.
func TestClientTalksDown(t *testing.T) {
	f := &fakePeer{answer: "1", refuse: func(claimed string) bool { return claimed != "1" }}
	c := fakeClient(t, f)
	if err := purge(c); err != nil {
		t.Fatal(err)
	}
	if got := f.calls(); strings.Join(got, ",") != "2,1" {
		t.Fatalf("claimed %v, want 2 then 1", got)
	}
}

// TestClientRefusals: a refused version, or an answer in a version this
// site does not speak, is a refusal naming the versions, never a link
// failure (which would be retried forever without a word).
func TestClientRefusals(t *testing.T) {
	for name, f := range map[string]*fakePeer{
		"peer refuses, newer": {answer: "3", refuse: func(string) bool { return true }},
		"malformed answer":    {answer: "two"},
		"peer refuses, same":  {answer: "2", refuse: func(string) bool { return true }},
	} {
		c := fakeClient(t, f)
		err := purge(c)
		if !errors.Is(err, peerwire.ErrIncompatible) || !errors.Is(err, replication.ErrRefused) || errors.Is(err, replication.ErrLinkDown) {
			t.Errorf("%s: %v, want a refusal of the protocol version", name, err)
		}
		if n := len(f.calls()); n != 1 {
			t.Errorf("%s: %d calls, want 1", name, n)
		}
	}
}

func TestClaimedVersion(t *testing.T) {
	f := &fakePeer{answer: "2"}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := NewConfig(srv.URL, replication.Credentials{AccessKey: "ak", SecretKey: "sk"}, ClientConfig{Protocol: 99})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendBucket(context.Background(), objects.Bucket{Name: "b"}, false, 1); err != nil {
		t.Fatal(err)
	}
	if got := f.calls(); got[0] != "99" {
		t.Fatalf("claimed %v", got)
	}
}

// TestPurgeSaysItsKind: a lifecycle's removal of an expired object delete
// marker reaches the peer as such (kind=expired-marker), for the peer to
// keep a marker that hides versions there; a plain purge carries no kind,
// as the peers before it expect.
func TestPurgeSaysItsKind(t *testing.T) {
	var mu sync.Mutex
	var kinds []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		kinds = append(kinds, r.Method+" "+r.URL.Query().Get("kind"))
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(peerwire.Outcome{Outcome: "applied"})
	}))
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, replication.Credentials{AccessKey: "ak", SecretKey: "sk"}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []objects.PurgeKind{objects.PurgeVersion, objects.PurgeExpiredMarker} {
		if _, err := c.SendPurge(t.Context(), "b", "k", "v", 1, how); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"DELETE ", "DELETE expired-marker"}; strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("purges sent %q, want %q", kinds, want)
	}
}
