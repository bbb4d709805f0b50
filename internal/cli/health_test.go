package cli

import (
	"strings"
	"testing"

	"github.com/twinlake/twinlake/internal/testsite"
)

func TestReadyAndPing(t *testing.T) {
	e := newSiteEnv(t)
	// An alias for a port nobody listens on: not ready, every ping fails.
	e.must("alias", "set", "dead", "http://"+testsite.FreeAddr(t), "k", "secretsecret")
	e.runSteps(t, []step{
		{name: "ready", args: []string{"ready", "s1"}, want: []string{"The site s1 is ready"}},
		{name: "ready json", args: []string{"ready", "--json", "s1"}, check: func(t *testing.T, out string) {
			if o := checkJSONStyle(t, out); len(o) != 1 || o[0]["healthy"] != true || o[0]["status"] != "success" {
				t.Errorf("ready --json = %v", o)
			}
		}},
		{name: "not ready", args: []string{"ready", "dead"}, wantErr: "not ready"},
		{name: "ready unknown alias", args: []string{"ready", "nosuch"}, wantErr: "no such alias"},
		{name: "ping count", args: []string{"ping", "--count", "3", "--interval", "10ms", "s1"}, check: func(t *testing.T, out string) {
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 3 || !strings.Contains(lines[2], "  3: ") || !strings.Contains(lines[2], "errors=0") ||
				!strings.Contains(lines[0], "/twinlake/health/live") || !strings.Contains(lines[0], "average=") {
				t.Errorf("ping:\n%s", out)
			}
		}},
		{name: "ping json", args: []string{"ping", "-c", "2", "-i", "10ms", "--json", "s1"}, check: func(t *testing.T, out string) {
			o := checkJSONStyle(t, out)
			if len(o) != 2 || o[1]["seq"] != float64(2) || o[1]["roundtripSeconds"].(float64) <= 0 || o[1]["errorCount"] != float64(0) {
				t.Errorf("ping --json = %v", o)
			}
		}},
		{name: "ping exit", args: []string{"ping", "--exit", "s1"}, check: func(t *testing.T, out string) {
			if n := strings.Count(out, "\n"); n != 1 {
				t.Errorf("ping --exit printed %d lines", n)
			}
		}},
		{name: "ping dead", args: []string{"ping", "-c", "2", "-i", "10ms", "dead"}, wantErr: "2 of the probes"},
	})
	out, _, err := e.runIn("", "ready", "--json", "dead")
	if o := checkJSONStyle(t, out); err == nil || len(o) != 1 || o[0]["status"] != "error" || o[0]["healthy"] != false {
		t.Errorf("ready --json dead: err %v, out %v", err, o)
	}
}
