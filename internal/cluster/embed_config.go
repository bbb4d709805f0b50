package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Bounds and defaults of EmbedConfig.
const (
	DefaultTickMs       = 100
	MinTickMs           = 10
	MaxTickMs           = 1000
	DefaultElectionMs   = 1000
	MaxElectionMs       = 50000 // etcd's own ceiling
	DefaultReadyTimeout = time.Minute
	MinReadyTimeout     = time.Second
	MaxReadyTimeout     = 10 * time.Minute
	// MaxVoters is the most members an embedded cluster may start with
	// (VoterCount never asks for more).
	MaxVoters = 5
)

// Transaction bounds of an embedded member: the most operations and bytes
// one request may carry (etcd's defaults are 128 and 1.5 MiB).
const (
	MaxTxnOps       = 4096
	MaxRequestBytes = 8 << 20
)

// Bounds of an embedded member's backend quota (EmbedConfig.QuotaBytes):
// past its quota a member raises the NOSPACE alarm and the cluster
// refuses every write. The default is etcd's own; the most is what etcd
// recommends, since its whole database is memory-mapped and every key
// has an entry in its in-memory index.
const (
	DefaultQuotaBytes = 2 << 30
	MinQuotaBytes     = 1 << 30
	MaxQuotaBytes     = 8 << 30
)

// CheckQuotaBytes reports whether q is a quota EmbedConfig takes: 0 (for
// DefaultQuotaBytes) or MinQuotaBytes..MaxQuotaBytes.
func CheckQuotaBytes(q int64) error {
	if q != 0 && (q < MinQuotaBytes || q > MaxQuotaBytes) {
		return fmt.Errorf("%d bytes outside [%d, %d] (1GiB to 8GiB)", q, int64(MinQuotaBytes), int64(MaxQuotaBytes))
	}
	return nil
}

// EmbedConfig configures one etcd voting member run in process.
type EmbedConfig struct {
	// Name is the member's name, unique in its cluster; it must be a key of
	// InitialCluster. Required.
	Name string
	// Dir is the member's own data directory, created mode 0700. Required.
	Dir string
	// PeerURL is where the member listens for and is reached by its peers,
	// http://host:port, or https:// with TLS. Required.
	PeerURL string
	// ClientURL is where the member serves clients, http://host:port, or
	// https:// with TLS. Required.
	ClientURL string
	// TLS, when set, encrypts the member's peer and client ports; the
	// peer port takes only connections that present a certificate TLS's
	// CA file trusts (clients authenticate as etcd users, see
	// EnableAuth). Every URL is then https://.
	TLS *TLSFiles
	// InitialCluster maps every voter's Name to its PeerURL, this member's
	// included, 1..MaxVoters entries. Read only when Dir holds no member
	// yet: a restarted member rejoins the cluster its data names.
	InitialCluster map[string]string
	// Existing starts the member in a running cluster it was added to
	// (see Rejoin): InitialCluster then lists the cluster's members as
	// Rejoin returned them.
	Existing bool
	// ClusterToken tells this cluster's members from another's at bootstrap
	// (the site's deployment ID is a good one). Required.
	ClusterToken string
	// TickMs is the raft heartbeat interval, MinTickMs..MaxTickMs; 0 means
	// DefaultTickMs.
	TickMs uint
	// ElectionMs is the raft election timeout, at least 5×TickMs and at most
	// MaxElectionMs; 0 means DefaultElectionMs.
	ElectionMs uint
	// QuotaBytes is the size of the member's database past which it
	// raises the NOSPACE alarm, MinQuotaBytes..MaxQuotaBytes; 0 means
	// DefaultQuotaBytes. Each member checks its own: give every member
	// the same.
	QuotaBytes int64
	// ReadyTimeout bounds how long StartEmbedded waits for the member to join
	// its cluster, MinReadyTimeout..MaxReadyTimeout; 0 means
	// DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Logger receives etcd's errors (nothing below error level); nil
	// discards them.
	Logger *slog.Logger
}

// TLSFiles are the PEM files an embedded member serves TLS with: its
// certificate and key (used as a client certificate towards its peers
// too), and the CA certificates a peer's or client's certificate must
// chain to.
type TLSFiles struct {
	CertFile, KeyFile, TrustedCAFile string
}

// scheme is the URL scheme of a member with tls (nil: none).
func scheme(tls *TLSFiles) string {
	if tls != nil {
		return "https"
	}
	return "http"
}

// withDefaults returns c with every zero setting given its default.
func (c EmbedConfig) withDefaults() EmbedConfig {
	if c.TickMs == 0 {
		c.TickMs = DefaultTickMs
	}
	if c.ElectionMs == 0 {
		c.ElectionMs = DefaultElectionMs
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = DefaultReadyTimeout
	}
	if c.QuotaBytes == 0 {
		c.QuotaBytes = DefaultQuotaBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports every problem of c at once, each wrapping
// ErrInvalidConfig. Zero settings that have defaults are valid.
func (c EmbedConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if c.Name == "" {
		bad("Name is required")
	}
	if c.Dir == "" {
		bad("Dir is required")
	}
	if c.ClusterToken == "" {
		bad("ClusterToken is required")
	}
	sch := scheme(c.TLS)
	if err := checkURL(c.PeerURL, sch); err != nil {
		bad("PeerURL: %v", err)
	}
	if err := checkURL(c.ClientURL, sch); err != nil {
		bad("ClientURL: %v", err)
	}
	if t := c.TLS; t != nil && (t.CertFile == "" || t.KeyFile == "" || t.TrustedCAFile == "") {
		bad("TLS needs CertFile, KeyFile and TrustedCAFile")
	}
	switch n := len(c.InitialCluster); {
	case n == 0:
		bad("InitialCluster is required")
	case n > MaxVoters:
		bad("InitialCluster has %d members, at most %d", n, MaxVoters)
	}
	for _, name := range slices.Sorted(maps.Keys(c.InitialCluster)) {
		if name == "" || strings.ContainsAny(name, "=,") {
			bad("InitialCluster member name %q is empty or holds '=' or ','", name)
		}
		if err := checkURL(c.InitialCluster[name], sch); err != nil {
			bad("InitialCluster[%q]: %v", name, err)
		}
	}
	if peer, ok := c.InitialCluster[c.Name]; c.Name != "" && len(c.InitialCluster) > 0 && (!ok || peer != c.PeerURL) {
		bad("InitialCluster must map Name %q to PeerURL %q", c.Name, c.PeerURL)
	}
	if c.TickMs < MinTickMs || c.TickMs > MaxTickMs {
		bad("TickMs %d is outside %d..%d", c.TickMs, MinTickMs, MaxTickMs)
	}
	if c.ElectionMs < 5*c.TickMs || c.ElectionMs > MaxElectionMs {
		bad("ElectionMs %d is outside 5×TickMs (%d)..%d", c.ElectionMs, 5*c.TickMs, MaxElectionMs)
	}
	if c.ReadyTimeout < MinReadyTimeout || c.ReadyTimeout > MaxReadyTimeout {
		bad("ReadyTimeout %v is outside %v..%v", c.ReadyTimeout, MinReadyTimeout, MaxReadyTimeout)
	}
	if err := CheckQuotaBytes(c.QuotaBytes); err != nil {
		bad("QuotaBytes %v", err)
	}
	return errors.Join(errs...)
}

// initialCluster renders InitialCluster as etcd reads it: name=url,...
// sorted by name.
func (c EmbedConfig) initialCluster() string {
	parts := make([]string, 0, len(c.InitialCluster))
	for _, name := range slices.Sorted(maps.Keys(c.InitialCluster)) {
		parts = append(parts, name+"="+c.InitialCluster[name])
	}
	return strings.Join(parts, ",")
}

// checkURL reports whether s is scheme://host:port and nothing more.
// CheckClientURL reports whether s is an etcd client URL as Config takes
// it: scheme://host:port, nothing more.
func CheckClientURL(s, scheme string) error { return checkURL(s, scheme) }

func checkURL(s, scheme string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q does not parse", s)
	}
	if u.Scheme != scheme || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not %s://host:port", s, scheme)
	}
	if _, port, err := net.SplitHostPort(u.Host); err != nil || port == "" || u.Hostname() == "" {
		return fmt.Errorf("%q has no host:port", s)
	}
	return nil
}
