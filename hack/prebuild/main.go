// Command prebuild compiles ahead, into their caches, the Kubernetes code of every supported
// release older than the default that CI's later stages run: the upstream agent and the kubelet
// of each (k8srelease.Kubelet builds the agent first, in one module per release; the node image
// of v1.36.3 then finds its packages compiled). .ci/run starts it beside make test, so that a
// cold CI compiles these releases while make test compiles v1.37 rather than after it, on the
// clusters lane's critical path (issue 34: a cold run's kind@matrix stage took 2710 s, most of
// it these compiles). Warm, every build is found in its cache in seconds. Compiles of one
// release wait for each other (k8srelease.LockRelease), so a stage that needs a release while
// it is being built here waits and then finds it. SIGINT or SIGTERM ends it, and the go command
// with it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/volperm/volperm/framework/k8srelease"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	for _, r := range k8srelease.Releases { // oldest first: the last is the default release
		if r == k8srelease.DefaultRelease {
			continue
		}
		t := time.Now()
		if _, err := k8srelease.Kubelet(ctx, r, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "prebuild: Kubernetes %s: %v\n", r, err)
			os.Exit(1)
		}
		fmt.Printf("prebuild: the upstream agent and the kubelet of Kubernetes %s in %s\n", r, time.Since(t).Round(time.Second))
	}
	fmt.Printf("prebuild: done in %s\n", time.Since(start).Round(time.Second))
}
