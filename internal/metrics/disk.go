package metrics

import (
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
)

// diskCollector reports the size and free space of the filesystem that
// holds a site's data directory, read when scraped.
type diskCollector struct {
	dir         string
	free, total *prometheus.Desc
}

// RegisterDisk registers the disk gauges of the filesystem holding dir.
func RegisterDisk(reg prometheus.Registerer, dir string) error {
	return reg.Register(&diskCollector{dir: dir,
		free:  prometheus.NewDesc(DiskFreeBytes, "Bytes available to the server on the filesystem holding the data directory.", nil, nil),
		total: prometheus.NewDesc(DiskTotalBytes, "Size in bytes of the filesystem holding the data directory.", nil, nil),
	})
}

func (c *diskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.free
	ch <- c.total
}

func (c *diskCollector) Collect(ch chan<- prometheus.Metric) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(c.dir, &st); err != nil {
		return // no sample rather than a wrong one
	}
	bs := float64(st.Bsize)
	ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(st.Bavail)*bs)
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(st.Blocks)*bs)
}
