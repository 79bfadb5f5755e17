// Package reference is the target "reference": volperm's own node implementation (nodeimpl/),
// in-process, on the real filesystem of this machine under a temporary root. Admission runs
// through nodeimpl/admission, set-up through nodeimpl/kubelet, and what it did is read back
// with stat and with probes run as real uids.
package reference

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/hostfeature"
)

// Name is the name the target registers under.
const Name = refnode.Name

func init() {
	framework.RegisterTarget(Name, "volperm's own apiserver model and node implementation, in-process, on this machine's filesystem (needs root for node-side cases)", New)
	framework.RegisterHalves(Name,
		func(framework.TargetOptions) (framework.APIServer, error) { return refnode.APIServer{}, nil },
		func(opts framework.TargetOptions) (framework.Node, error) { return NewNode(opts) })
}

// New builds the reference target: the reference apiserver with the reference kubelet.
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg != "" {
		return nil, fmt.Errorf("target %q takes no argument (got %q)", Name, opts.Arg)
	}
	node, err := NewNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewTargetPair(Name, refnode.APIServer{}, node), nil
}

// Node is the reference kubelet: nodeimpl/kubelet on this machine under a temporary root.
type Node struct {
	roots *caseroot.Roots
}

// NewNode checks the work dir the node makes its case roots in: --work-dir, or by default a
// tmpfs (caseroot.Scratch) when this machine has one with room.
func NewNode(opts framework.TargetOptions) (*Node, error) {
	work := opts.WorkDir
	if work == "" {
		work = caseroot.Scratch()
	}
	roots, err := caseroot.New(work)
	if err != nil {
		return nil, err
	}
	return &Node{roots: roots}, nil
}

// Info names the reference kubelet.
func (n *Node) Info() framework.TargetInfo { return refnode.Info() }

// SupportsNode: the reference kubelet runs every admitted pod; what this machine must have for it
// is HostNeeds.
func (n *Node) SupportsNode(*framework.Case, framework.Admitted) (bool, string) { return true, "" }

// RunsRelease: the reference kubelet simulates every supported release (docs/spec.md "Releases").
func (n *Node) RunsRelease(string) bool { return true }

// Concurrency: every case runs under its own root with its own kubelet and probe children, and
// nothing in nodeimpl is shared, so cases run one per CPU (framework.ConcurrentNode).
func (n *Node) Concurrency() int { return runtime.NumCPU() }

// HostNeeds is kubelet.HostNeeds of the admitted pod (framework.NodeHostNeeds).
func (n *Node) HostNeeds(_ *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return refnode.HostNeeds(a.Pod)
}

// ObserveNode runs the node lifecycle (framework/lifecycle) of the admitted pod on
// nodeimpl/kubelet under a new case root (docs/spec.md steps 3-8).
func (n *Node) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	root, err := n.roots.Make("volperm-ref-")
	if err != nil {
		return framework.NodeResult{Err: err}
	}
	var r framework.NodeResult
	if p, err := refnode.NewPod(root, c, a); err != nil {
		r.Err = err
	} else {
		r = lifecycle.Observe(ctx, c, a, p)
	}
	// After the teardown, on every path, including a cancelled ctx (SIGINT).
	if rerr := n.roots.Remove(root); rerr != nil {
		r = framework.NodeResult{Err: errors.Join(r.Err, rerr)}
	}
	return r
}

// Close removes every case root a cancelled or failed run left, unmounting first.
func (n *Node) Close() error {
	// The idle probe helpers end here, waited for, not when this process exits and their stdin
	// closes (nothing left running behind the run).
	probe.StopHelpers()
	return n.roots.RemoveAll()
}
