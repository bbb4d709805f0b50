package rest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/twinlake/twinlake/internal/objects"
)

// TestStorageFullIsUnavailable: a change refused because the site is out
// of room for new data (its reserve of free space, a full drive) is a 503
// ServiceUnavailableException with the reason, refused before anything
// was committed, not an internal error whose text stays in the log.
func TestStorageFullIsUnavailable(t *testing.T) {
	body, internal := classify(fmt.Errorf("write metadata: %w", objects.ErrStorageFull))
	if internal || body.Error.Code != http.StatusServiceUnavailable || body.Error.Type != typeUnavailable || body.Error.Message == "" {
		t.Fatalf("storage full: %+v (internal %v)", body, internal)
	}
}
