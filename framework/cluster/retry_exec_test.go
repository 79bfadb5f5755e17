package cluster

import (
	"errors"
	"testing"
)

// An exec the runtime failed before starting its process is tried again; one that failed while
// or after the command ran, or for another reason, is not (a probe must not run twice).
func TestRuntimeNotStarted(t *testing.T) {
	for msg, want := range map[string]bool{
		// CI, issue 34: right after a kubelet restart on a loaded node.
		"exec /volperm-probe in ns/probe-16: Internal error occurred: Internal error occurred: error executing command in container: failed to exec in container: failed to load task: context deadline exceeded: ": true,
		"exec /volperm-probe in ns/p: command terminated with exit code 1: probe failed":                                       false,
		"exec /volperm-probe in ns/p: error executing command in container: failed to exec in container: failed to start exec": false,
		"exec /volperm-probe in ns/p: context deadline exceeded (not finished within 3m0s)":                                    false,
	} {
		if got := runtimeNotStarted(errors.New(msg)); got != want {
			t.Errorf("runtimeNotStarted(%q) = %v, want %v", msg, got, want)
		}
	}
}
