// Command pause is the pod sandbox's process in volperm's kind node image: it holds the pod's
// namespaces, reaps the children it inherits and exits on SIGINT or SIGTERM, like
// registry.k8s.io/pause (build/pause/linux/pause.c), as a static Go binary.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		// build/pause/linux/pause.c sigreap: reap every exited child.
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
