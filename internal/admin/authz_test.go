package admin

import (
	"slices"
	"testing"

	"github.com/twinlake/twinlake/internal/iam/policy"
)

// TestRouteActions checks that every admin call names a known admin action,
// so that no route falls back to needing admin:* by omission.
func TestRouteActions(t *testing.T) {
	for _, rt := range allRoutes() {
		a, ok := routeActions[rt.name]
		if !ok {
			t.Errorf("route %s has no action in routeActions", rt.name)
			continue
		}
		if !slices.Contains(policy.AdminActions, a) {
			t.Errorf("route %s maps to %s, which package policy does not know", rt.name, a)
		}
	}
	for _, a := range []string{"admin:EnableUser", "admin:EnableGroup"} {
		if d := actionForStatus(a, false); !slices.Contains(policy.AdminActions, d) {
			t.Errorf("disabling needs unknown action %s", d)
		}
	}
}
