package scanner

import (
	"slices"
	"testing"

	"github.com/twinlake/twinlake/internal/catalog"
)

func TestReportedState(t *testing.T) {
	for _, c := range []struct {
		loop         string
		role, window bool
		want         string
	}{
		{StateDisabled, false, false, StateDisabled},
		{StateDisabled, true, false, StateWaiting}, // restarted replica, before its first cycle
		{StateWaiting, true, false, StateWaiting},
		{StateActive, true, false, StateActive},
		{StateTracking, true, false, StateTracking},
		{StateActive, false, false, StateDisabled},    // role just turned off
		{StateDisabled, false, true, StateRebuilding}, // restarted with a resync window open
		{StateRebuilding, true, true, StateRebuilding},
		{StateRebuilding, true, false, StateWaiting}, // rebuild completed, no cycle yet
	} {
		if got := reportedState(c.loop, c.role, c.window); got != c.want {
			t.Errorf("reportedState(%s, role=%t, window=%t) = %s, want %s", c.loop, c.role, c.window, got, c.want)
		}
	}
}

func TestNamespaceDiscards(t *testing.T) {
	ns := func(vid, origin string, deleted bool, props map[string]string) recordVersion {
		return recordVersion{vid: vid, origin: origin, rec: catalog.Record{Kind: catalog.KindNamespace, Properties: props, Deleted: deleted}}
	}
	primary := map[string]string{"owner": "dr"}
	for _, c := range []struct {
		name    string
		recs    []recordVersion // newest first
		primary map[string]string
		live    bool
		want    []string
	}{
		{"local change above the primary's", []recordVersion{
			ns("l2", "self", false, map[string]string{"owner": "local"}),
			ns("p1", "peer", false, primary),
			ns("l1", "self", false, map[string]string{"owner": "ops"}),
		}, primary, true, []string{"l2"}},
		{"primary never changed it: shared history kept", []recordVersion{
			ns("l2", "self", false, map[string]string{"owner": "local"}),
			ns("l1", "self", false, primary),
		}, primary, true, []string{"l2"}},
		{"local tombstone", []recordVersion{
			ns("l2", "self", true, primary),
			ns("p1", "peer", false, primary),
		}, primary, true, []string{"l2"}},
		{"nothing states the primary's properties", []recordVersion{
			ns("l1", "self", false, map[string]string{"owner": "local"}),
		}, primary, true, []string{"l1"}},
		{"no properties on either side", []recordVersion{
			ns("l1", "self", false, map[string]string{}),
		}, nil, true, nil},
		{"not on the primary", []recordVersion{
			ns("l1", "self", false, nil),
			ns("p1", "peer", false, nil),
		}, nil, false, []string{"l1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := namespaceDiscards(c.recs, "self", c.primary, c.live); !slices.Equal(got, c.want) {
				t.Errorf("discards %v, want %v", got, c.want)
			}
		})
	}
}
