package app

import (
	"github.com/twinlake/twinlake/internal/console"
)

// newConsole builds the browser console. Its calls are signed requests the
// site's own handler serves (SetBackend, once the router exists), so the
// console authorizes exactly as the S3, admin and catalog surfaces do.
func (s *Server) newConsole(auth sigv4Auth) (*console.Console, error) {
	return console.New(console.Config{
		Credentials: s.iam,
		Authorizer:  auth,
		Events:      s.trace,
		PeerClient:  s.cfg.PeerHTTPClient,
		Logger:      s.log,
	})
}
