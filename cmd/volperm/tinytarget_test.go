package main

import (
	"context"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/hostfeature"
)

// tinyNode is a target added the documented way (docs/architecture.md "Recipe: add a target"):
// a node half registered with framework.RegisterHalves and nothing else, whose ObserveNode makes
// a case root and hands a lifecycle.Pod (here the reference kubelet's) to lifecycle.Observe.
// It exists only in this test binary; `--target reference+tinynode` pairs it with the
// reference apiserver.
type tinyNode struct{ roots *caseroot.Roots }

func init() {
	framework.RegisterHalves("tinynode", nil, func(o framework.TargetOptions) (framework.Node, error) {
		roots, err := caseroot.New(o.WorkDir)
		return &tinyNode{roots}, err
	})
}

func (n *tinyNode) Info() framework.TargetInfo { return framework.TargetInfo{Name: "tinynode"} }

func (n *tinyNode) SupportsNode(*framework.Case, framework.Admitted) (bool, string) { return true, "" }

func (n *tinyNode) HostNeeds(_ *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return refnode.HostNeeds(a.Pod)
}

func (n *tinyNode) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	return n.observe(ctx, c, a, func(p *refnode.Pod) lifecycle.Pod { return p })
}

// observe runs c in a case root of its own on the reference kubelet's pod, as pod makes it.
func (n *tinyNode) observe(ctx context.Context, c *framework.Case, a framework.Admitted, pod func(*refnode.Pod) lifecycle.Pod) framework.NodeResult {
	root, err := n.roots.Make("volperm-tiny-")
	if err != nil {
		return framework.NodeResult{Err: err}
	}
	defer n.roots.Remove(root)
	p, err := refnode.NewPod(root, c, a)
	if err != nil {
		return framework.NodeResult{Err: err}
	}
	return lifecycle.Observe(ctx, c, a, pod(p))
}

func (n *tinyNode) Close() error { return n.roots.RemoveAll() }

// TestTinyTarget: the target above runs the cases with steps (chmod, setGates, restart, kubelet
// upgrades and downgrades: 122 cases) through the command, with no other change to volperm, and
// passes them. (Its focus once also matched "both gates on", 3,200 emptyDir cases without steps:
// 14.5 s of make test that proved nothing more; issue 34.)
func TestTinyTarget(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	code, stdout, stderr := runMain("run", "--target", "reference+tinynode", "--work-dir", caseroottest.TempDir(t),
		"--report-dir", t.TempDir(), "--focus", "restart|chmod|grade|gates on, off, on")
	if code != exitOK || !strings.Contains(stdout, "PASSED on target reference+tinynode") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Log(strings.SplitN(stdout[strings.Index(stdout, "PASSED"):], "\n", 2)[0])
}
