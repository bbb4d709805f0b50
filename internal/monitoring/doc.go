// Package monitoring holds the tests of the monitoring kit in
// docs/monitoring: every metric its Grafana dashboard and Prometheus alert
// rules use is exported by a live pair of sites, every runbook link points
// at a section of the operator guide, and promtool accepts the rules and
// passes their unit tests. It has no code of its own.
package monitoring
