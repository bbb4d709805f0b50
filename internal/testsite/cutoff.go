package testsite

import "github.com/twinlake/twinlake/internal/netcut"

// CutOff kills node i with SIGKILL and leaves its three ports (its
// address and its etcd member's) taking no connection: a connection to
// them times out, as to a machine that is down or cut off, where a killed
// process's ports refuse connections at once. StartNode or the test's end
// frees them.
func (c *Cluster) CutOff(i int) {
	c.t.Helper()
	c.KillNode(i)
	release, err := netcut.HoldPorts(c.Addrs[i], 3)
	if err != nil {
		c.t.Fatalf("testsite: cut off node %d: %v", i, err)
	}
	c.holes[i] = release
}

// mend frees the ports of node i that CutOff held.
func (c *Cluster) mend(i int) {
	if c.holes[i] != nil {
		c.holes[i]()
		c.holes[i] = nil
	}
}
