package cluster

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestEnableAuth: once a node turns authentication on, a client without
// the credentials can neither read nor write, the nodes' coordinators go
// on, and turning it on again changes nothing.
func TestEnableAuth(t *testing.T) {
	m := startMembers(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Open(ctx, Config{Endpoints: []string{m.ClientURL()}, Site: "authsite", NodeID: "n1",
		LeaseTTL: testLeaseTTL, Logger: testLogger(t), Username: RootUser, Password: "etcd-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := EnableAuth(ctx, c.Client(), "etcd-password-1"); err != nil {
		t.Fatal(err)
	}
	if err := EnableAuth(ctx, c.Client(), "etcd-password-1"); err != nil {
		t.Fatalf("second EnableAuth: %v", err)
	}
	if err := c.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	if ms, err := c.Members(ctx); err != nil || len(ms) != 1 {
		t.Fatalf("members after auth: %v %v", ms, err)
	}
	anon, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.Get(ctx, "/twinlake/", clientv3.WithPrefix()); err == nil {
		t.Fatal("a client without credentials read the site's records")
	}
	if _, err := anon.Put(ctx, "/twinlake/authsite/x", "y"); err == nil {
		t.Fatal("a client without credentials wrote")
	}
	wrong, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL()}, DialTimeout: 5 * time.Second,
		Username: RootUser, Password: "not-the-password"})
	if err == nil {
		defer wrong.Close()
		if _, err := wrong.Get(ctx, "/twinlake/", clientv3.WithPrefix()); err == nil {
			t.Fatal("a client with a wrong password read the site's records")
		}
	}
}
