// Package lint holds tests that keep the code's layering true: which
// internal package may import which.
package lint

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/twinlake/twinlake/"

// surfaces are the HTTP edges: they translate the wire to the domain.
var surfaces = []string{"internal/s3api", "internal/admin", "internal/catalog/rest", "internal/replication/peerhttp",
	"internal/app", "internal/cli", "internal/adminclient", "internal/nodeapi"}

// families are the CLI's command families, one package each.
var families = []string{"internal/cli/objcmd", "internal/cli/admincmd", "internal/cli/tablecmd",
	"internal/cli/democmd", "internal/cli/servercmd"}

// domain packages own state and decisions; they never speak HTTP.
var domain = []string{"internal/objects", "internal/catalog", "internal/replication", "internal/scanner",
	"internal/iam", "internal/config", "internal/meta", "internal/blob", "internal/hlc", "internal/trace"}

// rule forbids packages matching from (a path prefix) to import anything
// matching one of deny, except packages matching one of allow.
type rule struct {
	why   string
	from  []string
	deny  []string
	allow []string
}

var rules = []rule{
	{why: "the CLI is the top: only main imports it", from: []string{"internal/"}, deny: []string{"internal/cli"},
		allow: []string{"internal/cli"}},
	{why: "a command family stands alone: it shares through cmdutil, never imports another family or the root",
		from: families, deny: []string{"internal/cli"}, allow: []string{"internal/cli/cmdutil"}},
	{why: "the benchmarks drive the object verbs' removal, nothing else of another family", from: []string{"internal/cli/benchcmd"},
		deny: []string{"internal/cli"}, allow: []string{"internal/cli/cmdutil", "internal/cli/objcmd"}},
	{why: "cmdutil is shared by every family, so it imports none", from: []string{"internal/cli/cmdutil"},
		deny: []string{"internal/cli"}},
	{why: "only the composition root, the server and demo commands and the test harness build servers", from: []string{"internal/"},
		deny: []string{"internal/app"}, allow: []string{"internal/cli/servercmd", "internal/cli/democmd", "internal/testsite"}},
	{why: "a domain package never imports an HTTP surface", from: domain, deny: surfaces,
		allow: []string{"internal/replication/peerwire"}},
	{why: "the S3 surface knows objects, not the catalog, replication or the scanner", from: []string{"internal/s3api"},
		deny: []string{"internal/catalog", "internal/replication", "internal/scanner", "internal/admin", "internal/app"}},
	{why: "the CLI reaches sites through their public HTTP APIs (adminclient, S3, Iceberg REST), not domain internals",
		from: []string{"internal/cli"}, deny: []string{"internal/objects", "internal/catalog", "internal/replication",
			"internal/scanner", "internal/iam", "internal/meta", "internal/blob", "internal/admin", "internal/s3api"},
		// The policy language is a pure library (parse, check, canned
		// policies): the client checks a policy before sending it.
		allow: []string{"internal/iam/policy"}},
	{why: "catalogwire is shared by the catalog server and the CLI: it imports no twinlake package and not iceberg-go",
		from: []string{"internal/catalogwire"}, deny: []string{"internal/", "github.com/apache/iceberg-go"}},
	{why: "adminclient is the wire: it imports no server part", from: []string{"internal/adminclient"},
		deny: []string{"internal/admin", "internal/app", "internal/objects", "internal/catalog", "internal/replication",
			"internal/scanner", "internal/s3api", "internal/iam", "internal/meta"}},
	{why: "nothing outside the metadata seam touches Pebble", from: []string{"internal/", "cmd/"},
		deny: []string{"github.com/cockroachdb/pebble"}, allow: []string{"internal/meta"}},
	{why: "only the composition root and the harness wire the peer API's HTTP side", from: []string{"internal/"},
		deny: []string{"internal/replication/peerhttp"}, allow: []string{"internal/app", "internal/testsite", "internal/replication/peerhttp"}},
}

// within reports whether pkg is p or below it.
func within(pkg, p string) bool {
	return pkg == p || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") || (strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p))
}

func matchAny(pkg string, ps []string) bool {
	for _, p := range ps {
		if within(pkg, p) {
			return true
		}
	}
	return false
}

// imports lists every package of the module with its non-test imports,
// module paths trimmed.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], module)
		for _, imp := range f[1:] {
			m[pkg] = append(m[pkg], strings.TrimPrefix(imp, module))
		}
	}
	return m
}

// TestLayering fails when a package imports one it must not.
func TestLayering(t *testing.T) {
	all := imports(t)
	if len(all) < 10 {
		t.Fatalf("go list found only %d packages", len(all))
	}
	for pkg, imps := range all {
		for _, r := range rules {
			if !matchAny(pkg, r.from) || matchAny(pkg, r.allow) {
				continue
			}
			for _, imp := range imps {
				if matchAny(imp, r.deny) && !matchAny(imp, r.allow) && !within(imp, pkg) {
					t.Errorf("%s imports %s: %s", pkg, imp, r.why)
				}
			}
		}
	}
}

// TestRulesBite: each rule catches a made-up violation, so a rule that
// matches nothing (a renamed package) is noticed.
func TestRulesBite(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"internal/objects", "internal/cli"},
		{"internal/catalog", "internal/app"},
		{"internal/scanner", "internal/catalog/rest"},
		{"internal/s3api", "internal/catalog"},
		{"internal/cli", "internal/replication"},
		{"internal/cli/objcmd", "internal/cli/admincmd"},
		{"internal/cli/tablecmd", "internal/cli"},
		{"internal/cli/benchcmd", "internal/cli/tablecmd"},
		{"internal/cli/cmdutil", "internal/cli/objcmd"},
		{"internal/cli/admincmd", "internal/app"},
		{"internal/catalogwire", "github.com/apache/iceberg-go/table"},
		{"internal/catalogwire", "internal/catalog"},
		{"internal/adminclient", "internal/admin"},
		{"internal/objects", "github.com/cockroachdb/pebble/v2"},
		{"internal/scanner", "internal/replication/peerhttp"},
	} {
		caught := false
		for _, r := range rules {
			if matchAny(c.pkg, r.from) && !matchAny(c.pkg, r.allow) && matchAny(c.imp, r.deny) && !matchAny(c.imp, r.allow) {
				caught = true
			}
		}
		if !caught {
			t.Errorf("%s importing %s is not caught", c.pkg, path.Clean(c.imp))
		}
	}
}
