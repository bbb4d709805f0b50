package admincmd

import (
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/adminclient"
)

// TestStatusHumanIAMUnsupported: a peer that takes no IAM records is named
// as such, apart from the sites whose records merely differ.
func TestStatusHumanIAMUnsupported(t *testing.T) {
	st := adminclient.ReplicationStatus{Enabled: true, Site: "site1",
		IAM: map[string]bool{"site1": true, "site2": false}, IAMUnsupported: []string{"site2"},
		Targets: []adminclient.ReplicationTarget{{Name: "site2", Online: true, Pending: 2, IAMUnsupported: true}}}
	out := statusHuman(st)
	if !strings.Contains(out, "IAM: not replicable to site2 (older build: takes no IAM records; changes wait for its upgrade)") {
		t.Fatalf("status:\n%s", out)
	}
	st.IAMUnsupported, st.IAM["site2"] = nil, true
	if out := statusHuman(st); strings.Contains(out, "not replicable") || !strings.Contains(out, "IAM: in sync on 2/2 sites") {
		t.Fatalf("status in sync:\n%s", out)
	}
}
