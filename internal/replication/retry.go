package replication

import (
	"time"

	"github.com/twinlake/twinlake/internal/config"
)

// retryPolicy is the retry queue's (MRF) policy: exponential backoff from
// base, doubling each attempt, capped at maxDelay; dropped once an entry
// has failed maxRetries retries.
type retryPolicy struct {
	maxRetries     int
	base, maxDelay time.Duration
}

// currentRetryPolicy reads the policy from the settings; a change applies
// to the next failure.
func currentRetryPolicy(s *config.Store) retryPolicy {
	return retryPolicy{
		maxRetries: s.Int(config.SubsysReplication, config.ReplicationMaxRetries),
		base:       s.Duration(config.SubsysReplication, config.ReplicationRetryBaseDelay),
		maxDelay:   s.Duration(config.SubsysReplication, config.ReplicationRetryMaxDelay),
	}
}

// retryDecision is what happens to an entry whose send just failed.
type retryDecision struct {
	drop    bool      // give up: logged, counted, left to mismatch detection
	retries int       // the entry's retry count from now on
	due     time.Time // when to try again (unless drop)
}

// next decides for an entry that had failed retries retries before this
// failure (-1: it came from the journal and was never retried). A journal
// entry's first failure is retried at once; a retry's failure waits
// backoff(retries) or, past maxRetries, is dropped.
func (p retryPolicy) next(retries int, now time.Time) retryDecision {
	if retries < 0 {
		return retryDecision{retries: 0, due: now}
	}
	n := retries + 1
	if n >= p.maxRetries {
		return retryDecision{drop: true, retries: n}
	}
	return retryDecision{retries: n, due: now.Add(backoff(n, p.base, p.maxDelay))}
}

// backoff is the wait before retry attempt n+1 after n failed retries: the
// first retry is immediate, then base, 2×base, 4×base … capped at maxDelay.
func backoff(n int, base, maxDelay time.Duration) time.Duration {
	if n <= 0 {
		return 0
	}
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
