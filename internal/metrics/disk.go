package metrics

import (
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
)

// diskCollector reports the size and free space of the filesystem that
// holds a site's data directory, read when scraped, and the reserve the
// site keeps free there.
type diskCollector struct {
	dir                      string
	reserve                  int64
	free, total, reserveDesc *prometheus.Desc
}

// RegisterDisk registers the disk gauges of the filesystem holding dir,
// on which the site keeps reserve bytes free: below them it refuses new
// object data.
func RegisterDisk(reg prometheus.Registerer, dir string, reserve int64) error {
	return reg.Register(&diskCollector{dir: dir, reserve: reserve,
		free:  prometheus.NewDesc(DiskFreeBytes, "Bytes available to the server on the filesystem holding the data directory.", nil, nil),
		total: prometheus.NewDesc(DiskTotalBytes, "Size in bytes of the filesystem holding the data directory.", nil, nil),
		reserveDesc: prometheus.NewDesc(DiskReserveBytes,
			"Bytes the site keeps free on the filesystem holding the data directory: with less free it refuses new object data (507 XMinioStorageFull).", nil, nil),
	})
}

func (c *diskCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.free
	ch <- c.total
	ch <- c.reserveDesc
}

func (c *diskCollector) Collect(ch chan<- prometheus.Metric) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(c.dir, &st); err != nil {
		return // no sample rather than a wrong one
	}
	bs := float64(st.Bsize)
	ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(st.Bavail)*bs)
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(st.Blocks)*bs)
	ch <- prometheus.MustNewConstMetric(c.reserveDesc, prometheus.GaugeValue, float64(c.reserve))
}
