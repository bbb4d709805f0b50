package s3api

import (
	"slices"
	"testing"

	"github.com/twinlake/twinlake/internal/iam/policy"
)

// TestRouteActionsKnown: every routed S3 API needs an action that package
// policy knows, so a policy can name it (an unknown one is refused when a
// policy is stored) and no route is reachable only by s3:*.
func TestRouteActionsKnown(t *testing.T) {
	for _, rt := range routes {
		a, ok := apiActions[rt.api]
		if !ok {
			t.Errorf("route %s has no action in apiActions", rt.api)
			continue
		}
		if !slices.Contains(policy.S3Actions, a) {
			t.Errorf("route %s needs %s, which package policy does not know", rt.api, a)
		}
	}
}
