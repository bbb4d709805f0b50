package objects

import (
	"sync/atomic"

	"github.com/twinlake/twinlake/internal/meta"
)

// Usage is the site's live data: objects whose latest version is not a
// delete marker, and their bytes.
type Usage struct {
	Objects int64
	Bytes   int64
}

// usage counts live objects. It is computed once when the layer opens and
// kept current by every change of a key's latest version, so reading it
// never scans.
type usage struct {
	objects atomic.Int64
	bytes   atomic.Int64
}

func (u *usage) load(m meta.Store) error {
	return meta.Scan(m, []byte(pfxLatest), meta.PrefixEnd([]byte(pfxLatest)), func(k, v []byte) (bool, error) {
		var s latest
		if err := decode(v, &s); err != nil {
			return false, err
		}
		u.replace(nil, &s)
		return true, nil
	})
}

// replace accounts for a key's latest version changing from old to new
// (either may be nil).
func (u *usage) replace(old, new *latest) {
	if old != nil && !old.DeleteMarker {
		u.objects.Add(-1)
		u.bytes.Add(-old.Size)
	}
	if new != nil && !new.DeleteMarker {
		u.objects.Add(1)
		u.bytes.Add(new.Size)
	}
}

// Usage returns the site's live object count and bytes.
func (l *Layer) Usage() Usage {
	return Usage{Objects: l.usage.objects.Load(), Bytes: l.usage.bytes.Load()}
}
