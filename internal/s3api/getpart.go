package s3api

import (
	"net/http"

	"github.com/twinlake/twinlake/internal/objects"
)

// GET or HEAD with ?partNumber=N reads one part of an object as uploaded:
// its bytes (206 with Content-Range) and x-amz-mp-parts-count. An object
// not uploaded in parts has one part, the whole object. A part beyond the
// last is InvalidPart, as in S3.

var errRangeAndPart = apiErr("InvalidRequest", http.StatusBadRequest,
	"Cannot specify both Range header and partNumber query parameter.")

// partSpan returns where part n of v lies in its plaintext and how many
// parts v has; ok is false when there is no part n. multipart reports
// whether v was uploaded in parts (its segments carry part numbers).
func partSpan(v *objects.Version, n int) (span byteRange, count int, multipart, ok bool) {
	multipart = len(v.Segments) > 1 || (len(v.Segments) == 1 && v.Segments[0].Number > 0)
	if !multipart {
		return byteRange{0, v.Size}, 1, false, n == 1
	}
	var off int64
	for i, seg := range v.Segments {
		if i+1 == n {
			return byteRange{off, seg.Size}, len(v.Segments), true, true
		}
		off += seg.Size
	}
	return byteRange{}, len(v.Segments), true, false
}
