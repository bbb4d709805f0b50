package cluster

import (
	"testing"
	"time"
)

func TestNextState(t *testing.T) {
	for _, tc := range []struct {
		from      leaderState
		ev        leaderEvent
		candidate bool
		want      leaderState
	}{
		// follower
		{stateFollower, eventCampaign, true, stateCampaigning},
		{stateFollower, eventSessionLost, false, stateLost},
		{stateFollower, eventClose, false, stateClosed},
		{stateFollower, eventWon, false, stateFollower}, // stale: ignored
		// campaigning
		{stateCampaigning, eventWon, true, stateLeader},
		{stateCampaigning, eventCampaignFailed, true, stateCampaigning}, // retried
		{stateCampaigning, eventCampaign, true, stateCampaigning},
		{stateCampaigning, eventSessionLost, true, stateLost},
		{stateCampaigning, eventClose, true, stateClosed},
		// leader
		{stateLeader, eventSessionLost, true, stateLost},
		{stateLeader, eventDeposed, true, stateCampaigning},
		{stateLeader, eventCampaign, true, stateLeader},
		{stateLeader, eventClose, true, stateClosed},
		// lost
		{stateLost, eventSessionReady, true, stateCampaigning},
		{stateLost, eventSessionReady, false, stateFollower},
		{stateLost, eventSessionFailed, true, stateLost}, // retried
		{stateLost, eventCampaign, true, stateLost},      // campaigns once a session is back
		{stateLost, eventSessionLost, true, stateLost},
		{stateLost, eventWon, true, stateLost}, // a win under a dead session is no win
		{stateLost, eventClose, true, stateClosed},
		// closed stays closed
		{stateClosed, eventSessionReady, true, stateClosed},
		{stateClosed, eventCampaign, true, stateClosed},
	} {
		if got := nextState(tc.from, tc.ev, tc.candidate); got != tc.want {
			t.Errorf("nextState(%v, %v, candidate=%v) = %v, want %v", tc.from, tc.ev, tc.candidate, got, tc.want)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{
		{0, 0}, {1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond},
		{5, 1600 * time.Millisecond}, {6, 2 * time.Second}, {1000, 2 * time.Second},
	} {
		if got := retryDelay(tc.failures); got != tc.want {
			t.Errorf("retryDelay(%d) = %v, want %v", tc.failures, got, tc.want)
		}
	}
}

func TestCountsAsFailure(t *testing.T) {
	for ev := eventCampaign; ev <= eventClose; ev++ {
		want := ev == eventCampaignFailed || ev == eventSessionFailed || ev == eventDeposed
		if got := countsAsFailure(ev); got != want {
			t.Errorf("countsAsFailure(%v) = %v, want %v", ev, got, want)
		}
	}
}
