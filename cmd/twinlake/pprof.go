//go:build pprof

package main

// Built with -tags pprof, the binary serves net/http/pprof on
// TWINLAKE_PPROF_ADDR (default 127.0.0.1:6060), for profiling a running
// server. Release builds leave it out.

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
)

func init() {
	addr := os.Getenv("TWINLAKE_PPROF_ADDR")
	if addr == "" {
		addr = "127.0.0.1:6060"
	}
	runtime.SetBlockProfileRate(0)
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			log.Printf("pprof: %v", err)
		}
	}()
}
