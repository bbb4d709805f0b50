// Package mixedversion holds the tests that run pairs of real sites
// speaking different peer protocol versions: this build's (peerhttp,
// peerwire) against the frozen version 1 (peerhttp/internal/peerv1). They
// live apart from peerhttp so that its fuzz targets build without the
// whole server.
package mixedversion
