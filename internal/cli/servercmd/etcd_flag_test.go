package servercmd

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/twinlake/twinlake/internal/cli/cmdutil"
)

// --etcd is refused, with the reason, before anything starts: without
// --cluster, and with endpoints or credentials that cannot be right; so is
// --cluster-inline-limit and --etcd-quota without --cluster or outside
// their bounds, and --etcd-quota with --etcd.
func TestEtcdFlagRefusals(t *testing.T) {
	t.Setenv("TWINLAKE_ROOT_USER", "admin")
	t.Setenv("TWINLAKE_ROOT_PASSWORD", "a-long-enough-secret")
	t.Setenv("TWINLAKE_KMS_SECRET_KEY", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	cluster := []string{"--address", "127.0.0.1:1", "--cluster", "127.0.0.1:1,127.0.0.1:4"}
	tests := []struct {
		name string
		args []string
		user string
		want string
	}{
		{"without --cluster", []string{"--etcd", "http://127.0.0.1:2379"}, "", "give --cluster too"},
		{"not a URL", append(cluster, "--etcd", "127.0.0.1:2379"), "", "not an etcd client URL"},
		{"mixed schemes", append(cluster, "--etcd", "http://e1:2379,https://e2:2379"), "", "all http:// or all https://"},
		{"a user without a password", append(cluster, "--etcd", "http://e1:2379"), "twinlake", "both TWINLAKE_ETCD_USER and TWINLAKE_ETCD_PASSWORD"},
		{"a site name without --etcd", append(cluster, "--etcd-site", "lake"), "", "give --etcd too"},
		{"a site name that is a path", append(cluster, "--etcd", "http://e1:2379", "--etcd-site", "a/b"), "", "--etcd-site"},
		{"an inline limit without --cluster", []string{"--cluster-inline-limit", "4KiB"}, "", "give --cluster too"},
		{"an inline limit too large", append(cluster, "--cluster-inline-limit", "65KiB"), "", "outside [1024, 65536]"},
		{"an inline limit too small", append(cluster, "--cluster-inline-limit", "512B"), "", "outside [1024, 65536]"},
		{"an inline limit that is no size", append(cluster, "--cluster-inline-limit", "lots"), "", "--cluster-inline-limit"},
		{"an etcd quota without --cluster", []string{"--etcd-quota", "4GiB"}, "", "give --cluster too"},
		{"an etcd quota for an external etcd", append(cluster, "--etcd", "http://e1:2379", "--etcd-quota", "4GiB"), "", "an etcd run apart from the site"},
		{"an etcd quota too large", append(cluster, "--etcd-quota", "9GiB"), "", "outside [1073741824, 8589934592]"},
		{"an etcd quota too small", append(cluster, "--etcd-quota", "512MiB"), "", "outside [1073741824, 8589934592]"},
		{"an etcd quota that is no size", append(cluster, "--etcd-quota", "big"), "", "--etcd-quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TWINLAKE_ETCD_USER", tt.user)
			t.Setenv("TWINLAKE_ETCD_PASSWORD", "")
			root := &cobra.Command{Use: "twinlake", SilenceUsage: true, SilenceErrors: true}
			AddServerCommands(root, &cmdutil.Options{})
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			root.SetArgs(append([]string{"server", "--dir", filepath.Join(t.TempDir(), "d")}, tt.args...))
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("server %v: %v, want an error with %q", tt.args, err, tt.want)
			}
		})
	}
}
