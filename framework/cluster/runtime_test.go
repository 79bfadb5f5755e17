package cluster

import (
	"testing"

	"github.com/volperm/volperm/framework/needs"
)

// TestEveryCapabilityDetected: each runtime capability of framework/needs is read from a node
// by a detector, and each detector reads one of them (docs/architecture.md "Recipe: add a
// runtime capability").
func TestEveryCapabilityDetected(t *testing.T) {
	for _, c := range needs.Capabilities {
		if detectors[c.Name] == nil {
			t.Errorf("capability %s has no detector in runtime.go", c.Name)
		}
	}
	if len(detectors) != len(needs.Capabilities) {
		t.Errorf("%d detectors for %d capabilities", len(detectors), len(needs.Capabilities))
	}
}
