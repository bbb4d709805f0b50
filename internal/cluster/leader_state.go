package cluster

import "time"

// leaderState is where a Coordinator's leader loop is.
type leaderState uint8

const (
	// stateFollower: the session lives; the node is not a candidate.
	stateFollower leaderState = iota
	// stateCampaigning: the node's candidate key is written (or about to
	// be) and it waits for every older candidate's key to go.
	stateCampaigning
	// stateLeader: the node's key is the oldest, under a live session.
	stateLeader
	// stateLost: the session's lease is gone, and with it the membership
	// record and any candidate or leader key; a new session is being made.
	stateLost
	// stateClosed: the coordinator is closing; the loop ends.
	stateClosed
)

func (s leaderState) String() string {
	switch s {
	case stateFollower:
		return "follower"
	case stateCampaigning:
		return "campaigning"
	case stateLeader:
		return "leader"
	case stateLost:
		return "lost"
	case stateClosed:
		return "closed"
	}
	return "unknown"
}

// leaderEvent is what ended one turn of the leader loop in its state.
type leaderEvent uint8

const (
	// eventCampaign: Campaign was called; the node is now a candidate.
	eventCampaign leaderEvent = iota
	// eventWon: the election returned and the node's key is the oldest.
	eventWon
	// eventCampaignFailed: the election call failed, or returned with
	// another key oldest; the session still lives.
	eventCampaignFailed
	// eventDeposed: the leader's key went (or its watch broke) while the
	// session lives.
	eventDeposed
	// eventSessionLost: the session's lease expired, was revoked or could
	// not be kept alive.
	eventSessionLost
	// eventSessionReady: a new session is up and the node registered again.
	eventSessionReady
	// eventSessionFailed: a new session could not be made.
	eventSessionFailed
	// eventClose: the coordinator is closing.
	eventClose
)

func (e leaderEvent) String() string {
	switch e {
	case eventCampaign:
		return "campaign"
	case eventWon:
		return "won"
	case eventCampaignFailed:
		return "campaign-failed"
	case eventDeposed:
		return "deposed"
	case eventSessionLost:
		return "session-lost"
	case eventSessionReady:
		return "session-ready"
	case eventSessionFailed:
		return "session-failed"
	case eventClose:
		return "close"
	}
	return "unknown"
}

// nextState decides the leader loop's next state after event ev in state s;
// candidate says whether Campaign has been called. Losing the session beats
// everything but closing: with the lease gone the node holds nothing, so it
// can only make a new session, and then campaigns again if it is a
// candidate. A failed campaign is retried (after retryDelay); an event that
// does not apply to s leaves it where it is.
func nextState(s leaderState, ev leaderEvent, candidate bool) leaderState {
	if s == stateClosed || ev == eventClose {
		return stateClosed
	}
	if ev == eventSessionLost {
		return stateLost
	}
	switch {
	case s == stateFollower && ev == eventCampaign:
		return stateCampaigning
	case s == stateCampaigning && ev == eventWon:
		return stateLeader
	case s == stateLeader && ev == eventDeposed:
		return stateCampaigning
	case s == stateLost && ev == eventSessionReady && candidate:
		return stateCampaigning
	case s == stateLost && ev == eventSessionReady:
		return stateFollower
	}
	return s
}

// Retry pacing of the leader loop after failures in a row.
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 2 * time.Second
)

// retryDelay returns how long the leader loop waits before its next try
// after failures failed tries in a row: nothing while none failed, then
// retryBase doubling up to retryMax.
func retryDelay(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := retryBase
	for i := 1; i < failures && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// countsAsFailure reports whether ev is a failed try, paced by retryDelay;
// any other event resets the count. A deposal counts, so that a leader
// watch that keeps breaking cannot spin the loop.
func countsAsFailure(ev leaderEvent) bool {
	return ev == eventCampaignFailed || ev == eventSessionFailed || ev == eventDeposed
}
