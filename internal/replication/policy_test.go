package replication

import (
	"testing"
	"time"
)

// TestLinkStateMachine: every state × event.
func TestLinkStateMachine(t *testing.T) {
	for _, c := range []struct {
		from linkState
		ev   linkEvent
		to   linkState
		ch   linkChange
	}{
		{linkProbing, probeOK, linkOnline, linkCameUp},
		{linkProbing, probeFailed, linkOffline, linkSame},
		{linkProbing, sendLinkDown, linkOffline, linkSame},
		{linkOnline, probeOK, linkOnline, linkSame},
		{linkOnline, probeFailed, linkOffline, linkWentDown},
		{linkOnline, sendLinkDown, linkOffline, linkWentDown},
		{linkOffline, probeOK, linkOnline, linkCameUp},
		{linkOffline, probeFailed, linkOffline, linkSame},
		{linkOffline, sendLinkDown, linkOffline, linkSame},
	} {
		to, ch := c.from.next(c.ev)
		if to != c.to || ch != c.ch {
			t.Errorf("%v on event %d: %v/%d, want %v/%d", c.from, c.ev, to, ch, c.to, c.ch)
		}
	}
	if probeWait(linkOnline, time.Second) != time.Second || probeWait(linkOffline, time.Second) != 200*time.Millisecond ||
		probeWait(linkProbing, 50*time.Millisecond) != 50*time.Millisecond {
		t.Error("probe waits")
	}
}

// TestRetryPolicy: a journal entry's failure is retried at once; each
// retry's failure backs off, doubling up to the cap; the failure that
// reaches max_retries drops the entry.
func TestRetryPolicy(t *testing.T) {
	now := time.Unix(1000, 0)
	p := retryPolicy{maxRetries: 4, base: time.Second, maxDelay: 3 * time.Second}
	for _, c := range []struct {
		retries int
		want    retryDecision
	}{
		{-1, retryDecision{retries: 0, due: now}},
		{0, retryDecision{retries: 1, due: now.Add(time.Second)}},
		{1, retryDecision{retries: 2, due: now.Add(2 * time.Second)}},
		{2, retryDecision{retries: 3, due: now.Add(3 * time.Second)}},
		{3, retryDecision{drop: true, retries: 4}},
		{9, retryDecision{drop: true, retries: 10}},
	} {
		if got := p.next(c.retries, now); got != c.want {
			t.Errorf("after %d retries: %+v, want %+v", c.retries, got, c.want)
		}
	}
	// max_retries 0: the first retry's failure drops the entry.
	zero := retryPolicy{base: time.Second, maxDelay: time.Second}
	if d := zero.next(-1, now); d.drop {
		t.Error("a journal entry's first failure is always retried")
	}
	if d := zero.next(0, now); !d.drop {
		t.Error("max_retries 0: the first retry's failure drops")
	}
	// Attempts a journal entry gets before it is dropped: 1 + maxRetries.
	attempts, retries := 1, -1
	for {
		d := p.next(retries, now)
		if d.drop {
			break
		}
		attempts++
		retries = d.retries
	}
	if attempts != 1+p.maxRetries {
		t.Errorf("%d attempts, want %d", attempts, 1+p.maxRetries)
	}
}

// TestBackoff: the first retry is immediate, then base doubling, capped.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, 0}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {6, 30 * time.Second}, {60, 30 * time.Second}} {
		if got := backoff(c.n, time.Second, 30*time.Second); got != c.want {
			t.Errorf("backoff(%d) = %v, want %v", c.n, got, c.want)
		}
	}
}
