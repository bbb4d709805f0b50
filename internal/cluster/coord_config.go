package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Bounds and defaults of Config.
const (
	DefaultLeaseTTL       = 10 * time.Second
	MinLeaseTTL           = 2 * time.Second
	MaxLeaseTTL           = time.Minute
	DefaultRequestTimeout = 5 * time.Second
	MinRequestTimeout     = 100 * time.Millisecond
	MaxRequestTimeout     = time.Minute
	maxNameLen            = 256
)

// NodeInfo is what a node publishes about itself in the site's membership.
// It is public to every client of the site's etcd: never put a secret in it.
type NodeInfo struct {
	// Address is where the node serves S3 and its peer API, host:port.
	Address string `json:"address"`
	// Version is the twinlake version the node runs.
	Version string `json:"version"`
	// Started is when the node's process started.
	Started time.Time `json:"started"`
}

// Member is one registered node of the site.
type Member struct {
	ID   string
	Info NodeInfo
}

// Config configures a Coordinator.
type Config struct {
	// Endpoints are the client URLs (http://host:port, or https:// with
	// TLS) of the site's etcd
	// voters. Required.
	Endpoints []string
	// Site names the site; its records live under /twinlake/<Site>/.
	// Required: no '/', blanks or control characters.
	Site string
	// NodeID names this node, unique in the site (its --cluster name,
	// host:port). Required, spelled as Site. A second coordinator opened
	// with the same NodeID takes the membership record over.
	NodeID string
	// Nodes, when set, are the site's nodes. The first node to open
	// records them under nodes; Open refuses a site whose record lists
	// others (ErrOtherSite), before the node registers.
	Nodes []string
	// Info is published under members/<NodeID> for as long as the node's
	// session lives.
	Info NodeInfo
	// LeaseTTL is how long the node's membership and leadership outlive its
	// last keep-alive: a dead node's leadership passes on after at most this
	// long. Whole seconds, MinLeaseTTL..MaxLeaseTTL; 0 means
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// RequestTimeout bounds connecting and each request the coordinator
	// makes on its own behalf (granting a lease, registering the node),
	// MinRequestTimeout..MaxRequestTimeout; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Logger receives the coordinator's log (leadership changes, failures
	// to reach etcd) and the etcd client's errors; nil discards it.
	Logger *slog.Logger
	// Username and Password, when set, authenticate the coordinator's
	// client to etcd (see EnableAuth); on an etcd without authentication
	// they are not needed and do no harm.
	Username, Password string
	// TLS, when set, is how the coordinator's client reaches etcd over
	// TLS (its roots, and a client certificate where etcd asks for one).
	TLS *tls.Config
	// Local, when set, is the client URL of the etcd member in this
	// node's own process, one of Endpoints: the coordinator's client
	// (Client) then talks to that member alone, sparing each call a trip
	// to another machine (see Embedded.TakeLead). A node cut off from
	// the others is cut off from them either way. Storage still asks
	// every endpoint.
	Local string
}

// withDefaults returns c with every zero setting given its default.
func (c Config) withDefaults() Config {
	if c.LeaseTTL == 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports every problem of c at once, each wrapping
// ErrInvalidConfig. Zero settings that have defaults are valid.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if len(c.Endpoints) == 0 {
		bad("Endpoints is required")
	}
	for _, ep := range c.Endpoints {
		sch := "http"
		if c.TLS != nil {
			sch = "https"
		}
		if err := checkURL(ep, sch); err != nil {
			bad("Endpoints: %v", err)
		}
	}
	if c.Local != "" && !slices.Contains(c.Endpoints, c.Local) {
		bad("Local: %q is not among the Endpoints", c.Local)
	}
	if err := checkName(c.Site); err != nil {
		bad("Site: %v", err)
	}
	if err := checkName(c.NodeID); err != nil {
		bad("NodeID: %v", err)
	}
	for _, n := range c.Nodes {
		if err := checkName(n); err != nil || strings.Contains(n, ",") {
			bad("Nodes: %q is not a node name", n)
		}
	}
	if len(c.Nodes) > 0 && !slices.Contains(c.Nodes, c.NodeID) {
		bad("Nodes: %s is not among them", c.NodeID)
	}
	if c.LeaseTTL < MinLeaseTTL || c.LeaseTTL > MaxLeaseTTL || c.LeaseTTL%time.Second != 0 {
		bad("LeaseTTL %v is not whole seconds in %v..%v", c.LeaseTTL, MinLeaseTTL, MaxLeaseTTL)
	}
	if c.RequestTimeout < MinRequestTimeout || c.RequestTimeout > MaxRequestTimeout {
		bad("RequestTimeout %v is outside %v..%v", c.RequestTimeout, MinRequestTimeout, MaxRequestTimeout)
	}
	return errors.Join(errs...)
}

// CheckSiteName reports whether s can name a site in etcd: one segment of
// a key path, under /twinlake/.
func CheckSiteName(s string) error { return checkName(s) }

// checkName reports whether s can be one segment of an etcd key path.
func checkName(s string) error {
	switch {
	case s == "":
		return errors.New("is required")
	case len(s) > maxNameLen:
		return fmt.Errorf("is longer than %d bytes", maxNameLen)
	case strings.ContainsFunc(s, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) }):
		return fmt.Errorf("%q holds '/', a blank or a control character", s)
	}
	return nil
}
