// Command twinlake is the twinlake server and its operator's client.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twinlake/twinlake/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cli.Execute(ctx, cli.NewRoot()); err != nil {
		fmt.Fprintln(os.Stderr, "twinlake:", err)
		os.Exit(1)
	}
}
