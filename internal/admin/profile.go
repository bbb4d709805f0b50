package admin

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/twinlake/twinlake/internal/adminclient"
)

var profileRoutes = []route{
	{http.MethodGet, adminclient.PathProfile, "admin.Profile", (*Server).profile},
}

// errProfileBusy is answered (409) while another CPU profile runs: the
// runtime takes one at a time.
var errProfileBusy = errors.New("a CPU profile is already being taken on this server")

// profile answers a runtime profile of the server in pprof's format
// (go tool pprof reads it): ?type=cpu (default), block or mutex sample for
// ?duration (default 10s); heap and goroutine are a snapshot.
func (s *Server) profile(w http.ResponseWriter, r *http.Request, c *call) error {
	q := r.URL.Query()
	typ := cmpOr(q.Get("type"), adminclient.ProfileCPU)
	d := adminclient.ProfileDefaultDuration
	if v := q.Get("duration"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < adminclient.ProfileMinDuration || d > adminclient.ProfileMaxDuration {
			return fmt.Errorf("%w: duration %q: want %v to %v", ErrBadRequest, v, adminclient.ProfileMinDuration, adminclient.ProfileMaxDuration)
		}
	}
	// A profile outlives any server write timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	var buf bytes.Buffer
	wait := func() error {
		select {
		case <-r.Context().Done():
			return r.Context().Err()
		case <-time.After(d):
			return nil
		}
	}
	var err error
	switch typ {
	case adminclient.ProfileCPU:
		if pprof.StartCPUProfile(&buf) != nil {
			return errProfileBusy
		}
		err = wait()
		pprof.StopCPUProfile()
	case adminclient.ProfileBlock:
		runtime.SetBlockProfileRate(int(time.Microsecond)) // one sample per µs blocked
		err = wait()
		if err == nil {
			err = pprof.Lookup("block").WriteTo(&buf, 0)
		}
		runtime.SetBlockProfileRate(0)
	case adminclient.ProfileMutex:
		prev := runtime.SetMutexProfileFraction(10)
		err = wait()
		if err == nil {
			err = pprof.Lookup("mutex").WriteTo(&buf, 0)
		}
		runtime.SetMutexProfileFraction(prev)
	case adminclient.ProfileHeap, adminclient.ProfileGoroutine:
		d = 0
		err = pprof.Lookup(typ).WriteTo(&buf, 0)
	default:
		return fmt.Errorf("%w: profile type %q: want one of %v", ErrBadRequest, typ, adminclient.ProfileTypes)
	}
	if err != nil {
		return err
	}
	c.msg = fmt.Sprintf("%s profile over %v, %d bytes", typ, d, buf.Len())
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="profile-%s.pprof"`, typ))
	_, err = w.Write(buf.Bytes())
	return err
}
