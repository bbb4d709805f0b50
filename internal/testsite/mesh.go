package testsite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twinlake/twinlake/internal/replication"
	"github.com/twinlake/twinlake/internal/testsite/faultproxy"
)

// Member is a site of a replication mesh with the fault-injecting proxy
// every other site reaches it through.
type Member struct {
	*Site
	Name  string
	Proxy *faultproxy.Proxy
}

// Mesh is a set of sites joined by site replication.
type Mesh struct {
	Sites []*Member
}

// StartMesh starts n sites named site1..siteN, each behind its own proxy,
// and joins them with site replication (site1 first). settings are applied
// to every site's replication subsystem before joining (e.g. short retry
// delays). opts apply to every site; per-site options go in perSite.
func StartMesh(t testing.TB, n int, settings map[string]string, perSite func(i int) []Option) *Mesh {
	t.Helper()
	m := StartSites(t, n, settings, perSite)
	m.Join(t)
	return m
}

// StartSites starts the sites of a mesh, each behind its proxy, without
// joining them (see Join).
func StartSites(t testing.TB, n int, settings map[string]string, perSite func(i int) []Option) *Mesh {
	t.Helper()
	m := &Mesh{}
	for i := range n {
		name := fmt.Sprintf("site%d", i+1)
		opts := []Option{WithName(name)}
		if perSite != nil {
			opts = append(opts, perSite(i)...)
		}
		s := Start(t, opts...)
		p, err := faultproxy.New(s.Addr)
		if err != nil {
			t.Fatalf("testsite: proxy: %v", err)
		}
		t.Cleanup(func() { p.Close() })
		if len(settings) > 0 {
			if err := s.Server().Settings().Set(context.Background(), "replication", settings); err != nil {
				t.Fatalf("testsite: settings: %v", err)
			}
		}
		m.Sites = append(m.Sites, &Member{Site: s, Name: name, Proxy: p})
	}
	return m
}

// Join joins every site of the mesh with site replication, the first site
// first, each reached through its proxy.
func (m *Mesh) Join(t testing.TB) {
	t.Helper()
	n := len(m.Sites)
	specs := make([]replication.SiteSpec, n)
	for i, s := range m.Sites {
		specs[i] = replication.SiteSpec{Name: s.Name, Endpoint: s.Proxy.URL(), AccessKey: s.AccessKey, SecretKey: s.SecretKey}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.Sites[0].Server().Replication().Add(ctx, specs); err != nil {
		t.Fatalf("testsite: join sites: %v", err)
	}
}

// Eventually polls cond until it returns nil or the deadline passes, then
// fails the test with cond's last error.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := 10 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reached within %v: %v", timeout, err)
		}
		time.Sleep(wait)
		wait = min(wait*2, 200*time.Millisecond)
	}
}

// Drained reports nil once the site has nothing left to send to any peer
// (journal and retry queue empty), else what is left.
func Drained(s *Site) error {
	st, err := s.Server().Replication().Status(context.Background())
	if err != nil {
		return err
	}
	for _, tg := range st.Targets {
		if tg.Pending+tg.Retrying > 0 {
			return fmt.Errorf("backlog to %s: %d pending, %d retrying", tg.Name, tg.Pending, tg.Retrying)
		}
	}
	return nil
}
