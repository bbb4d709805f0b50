package cluster

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"
)

func validEmbedConfig() EmbedConfig {
	return EmbedConfig{
		Name: "n1", Dir: "/tmp/n1", ClusterToken: "site-a",
		PeerURL: "http://127.0.0.1:2380", ClientURL: "http://127.0.0.1:2379",
		InitialCluster: map[string]string{"n1": "http://127.0.0.1:2380", "n2": "http://10.0.0.2:2380"},
	}
}

// toTLS turns c's URLs to https and gives it files.
func toTLS(c *EmbedConfig, files TLSFiles) {
	c.TLS = &files
	c.PeerURL = strings.Replace(c.PeerURL, "http:", "https:", 1)
	c.ClientURL = strings.Replace(c.ClientURL, "http:", "https:", 1)
	for n, u := range c.InitialCluster {
		c.InitialCluster[n] = strings.Replace(u, "http:", "https:", 1)
	}
}

func TestEmbedConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*EmbedConfig)
		problem string // "" when valid
	}{
		{"defaults", func(*EmbedConfig) {}, ""},
		{"fast test timing", func(c *EmbedConfig) { c.TickMs, c.ElectionMs = 50, 500 }, ""},
		{"bounds inclusive", func(c *EmbedConfig) {
			c.TickMs, c.ElectionMs, c.ReadyTimeout, c.QuotaBytes = MaxTickMs, MaxElectionMs, MaxReadyTimeout, MaxQuotaBytes
		}, ""},
		{"least quota", func(c *EmbedConfig) { c.QuotaBytes = MinQuotaBytes }, ""},
		{"quota too small", func(c *EmbedConfig) { c.QuotaBytes = MinQuotaBytes - 1 }, "QuotaBytes 1073741823"},
		{"quota too large", func(c *EmbedConfig) { c.QuotaBytes = MaxQuotaBytes + 1 }, "QuotaBytes 8589934593"},
		{"negative quota", func(c *EmbedConfig) { c.QuotaBytes = -1 }, "QuotaBytes -1"},
		{"no name", func(c *EmbedConfig) { c.Name = "" }, "Name is required"},
		{"no dir", func(c *EmbedConfig) { c.Dir = "" }, "Dir is required"},
		{"no token", func(c *EmbedConfig) { c.ClusterToken = "" }, "ClusterToken is required"},
		{"peer url https without TLS", func(c *EmbedConfig) {
			c.PeerURL = "https://127.0.0.1:2380"
			c.InitialCluster["n1"] = c.PeerURL
		}, "PeerURL"},
		{"TLS", func(c *EmbedConfig) { toTLS(c, TLSFiles{CertFile: "c", KeyFile: "k", TrustedCAFile: "ca"}) }, ""},
		{"TLS without a CA", func(c *EmbedConfig) { toTLS(c, TLSFiles{CertFile: "c", KeyFile: "k"}) }, "TLS needs"},
		{"TLS with an http peer", func(c *EmbedConfig) {
			toTLS(c, TLSFiles{CertFile: "c", KeyFile: "k", TrustedCAFile: "ca"})
			c.InitialCluster["n2"] = "http://10.0.0.2:2380"
		}, `InitialCluster["n2"]`},
		{"TLS with an http client url", func(c *EmbedConfig) {
			toTLS(c, TLSFiles{CertFile: "c", KeyFile: "k", TrustedCAFile: "ca"})
			c.ClientURL = "http://127.0.0.1:2379"
		}, "ClientURL"},
		{"client url without port", func(c *EmbedConfig) { c.ClientURL = "http://127.0.0.1" }, "ClientURL"},
		{"client url with path", func(c *EmbedConfig) { c.ClientURL = "http://127.0.0.1:2379/x" }, "ClientURL"},
		{"no initial cluster", func(c *EmbedConfig) { c.InitialCluster = nil }, "InitialCluster is required"},
		{"six voters", func(c *EmbedConfig) {
			for _, n := range []string{"n3", "n4", "n5", "n6"} {
				c.InitialCluster[n] = "http://127.0.0.1:1"
			}
		}, "at most 5"},
		{"self missing", func(c *EmbedConfig) { delete(c.InitialCluster, "n1") }, "must map Name"},
		{"self elsewhere", func(c *EmbedConfig) { c.InitialCluster["n1"] = "http://127.0.0.1:9" }, "must map Name"},
		{"bad peer in cluster", func(c *EmbedConfig) { c.InitialCluster["n2"] = "n2:2380" }, `InitialCluster["n2"]`},
		{"name with comma", func(c *EmbedConfig) { c.InitialCluster["a,b"] = "http://127.0.0.1:1" }, "holds '='"},
		{"tick too small", func(c *EmbedConfig) { c.TickMs, c.ElectionMs = 5, 500 }, "TickMs 5"},
		{"tick too big", func(c *EmbedConfig) { c.TickMs, c.ElectionMs = 2000, 20000 }, "TickMs 2000"},
		{"election under 5 ticks", func(c *EmbedConfig) { c.TickMs, c.ElectionMs = 100, 400 }, "ElectionMs 400"},
		{"election too long", func(c *EmbedConfig) { c.ElectionMs = 60000 }, "ElectionMs 60000"},
		{"ready timeout too short", func(c *EmbedConfig) { c.ReadyTimeout = time.Millisecond }, "ReadyTimeout"},
		{"ready timeout too long", func(c *EmbedConfig) { c.ReadyTimeout = time.Hour }, "ReadyTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validEmbedConfig()
			tc.edit(&c)
			checkProblem(t, c.Validate(), tc.problem)
		})
	}
}

func TestEmbedConfigReportsEveryProblem(t *testing.T) {
	err := EmbedConfig{TickMs: 1}.Validate()
	for _, want := range []string{"Name", "Dir", "ClusterToken", "PeerURL", "ClientURL", "InitialCluster", "TickMs"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestInitialClusterSorted(t *testing.T) {
	got := validEmbedConfig().initialCluster()
	if want := "n1=http://127.0.0.1:2380,n2=http://10.0.0.2:2380"; got != want {
		t.Fatalf("initialCluster() = %q, want %q", got, want)
	}
}

func validConfig() Config {
	return Config{Endpoints: []string{"http://127.0.0.1:2379"}, Site: "site-a", NodeID: "node1:9000"}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*Config)
		problem string
	}{
		{"defaults", func(*Config) {}, ""},
		{"lease bounds", func(c *Config) { c.LeaseTTL = MinLeaseTTL }, ""},
		{"lease max", func(c *Config) { c.LeaseTTL, c.RequestTimeout = MaxLeaseTTL, MaxRequestTimeout }, ""},
		{"no endpoints", func(c *Config) { c.Endpoints = nil }, "Endpoints is required"},
		{"bad endpoint", func(c *Config) { c.Endpoints = append(c.Endpoints, "127.0.0.1:2379") }, "Endpoints"},
		{"TLS", func(c *Config) { c.TLS, c.Endpoints = &tls.Config{}, []string{"https://127.0.0.1:2379"} }, ""},
		{"TLS with an http endpoint", func(c *Config) { c.TLS = &tls.Config{} }, "Endpoints"},
		{"local member", func(c *Config) { c.Local = c.Endpoints[0] }, ""},
		{"local member not an endpoint", func(c *Config) { c.Local = "http://127.0.0.1:2380" }, "Local"},
		{"no site", func(c *Config) { c.Site = "" }, "Site: is required"},
		{"site with slash", func(c *Config) { c.Site = "a/b" }, "Site"},
		{"node with blank", func(c *Config) { c.NodeID = "a b" }, "NodeID"},
		{"node too long", func(c *Config) { c.NodeID = strings.Repeat("a", 257) }, "NodeID"},
		{"lease too short", func(c *Config) { c.LeaseTTL = time.Second }, "LeaseTTL"},
		{"lease too long", func(c *Config) { c.LeaseTTL = 2 * time.Minute }, "LeaseTTL"},
		{"lease not whole seconds", func(c *Config) { c.LeaseTTL = 2500 * time.Millisecond }, "LeaseTTL"},
		{"request timeout too short", func(c *Config) { c.RequestTimeout = time.Millisecond }, "RequestTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			checkProblem(t, c.Validate(), tc.problem)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	c := validConfig().withDefaults()
	if c.LeaseTTL != DefaultLeaseTTL || c.RequestTimeout != DefaultRequestTimeout || c.Logger == nil {
		t.Fatalf("defaults not applied: %+v", c)
	}
	e := validEmbedConfig().withDefaults()
	if e.TickMs != DefaultTickMs || e.ElectionMs != DefaultElectionMs || e.ReadyTimeout != DefaultReadyTimeout || e.Logger == nil {
		t.Fatalf("defaults not applied: %+v", e)
	}
}

// checkProblem fails t unless err is nil when problem is "", or wraps
// ErrInvalidConfig and mentions problem otherwise.
func checkProblem(t *testing.T, err error, problem string) {
	t.Helper()
	switch {
	case problem == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case problem == "":
	case !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), problem):
		t.Fatalf("error %v, want ErrInvalidConfig mentioning %q", err, problem)
	}
}
