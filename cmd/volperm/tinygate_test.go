package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/gates"
)

// tinyGate is a gate added the documented way (docs/architecture.md "Recipe: add a gate or a
// release"): a row of framework's gate table and the reference node's own row (the reference
// node is written independently of framework, so it keeps its own), nothing else. It exists only
// in this test binary (RegisterGate instead of an edit of gate.go) and changes no behaviour: a
// conforming node with it on does what it does with it off.
const tinyGate = "TinyGate"

func init() {
	framework.RegisterGate(framework.Gate{Name: tinyGate, Default: false, First: "v1.37", Upstream: false})
	gates.Register(tinyGate, false)
}

const tinyGateCase = `apiVersion: volperm.dev/v1
kind: Case
name: an emptyDir with the tiny gate on both components
area: emptydir
profile: conformance
gates:
  apiserver: {TinyGate: true}
  kubelet: {TinyGate: true}
pod:
  spec:
    volumes:
    - name: scratch
      emptyDir: {}
probes:
- {name: uid 1003 creates a file, volume: scratch, as: {uid: 1003, gid: 1003}, op: create, path: f}
`

// TestTinyGate: with the gate's two rows and no other change, a case file that sets it loads,
// runs on the reference target through the command and passes; the command's gate flags know it;
// volperm's own gate is not one the real components (kind, cluster, upstream) are given, and a
// release before its first has no such gate. The run is this test binary again, in a process
// of its own (tinyGateChild): a process runs one Ginkgo suite, and TestTinyTarget's is this one's.
func TestTinyGate(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	if file := os.Getenv(tinyGateChild); file != "" {
		code, stdout, stderr := runMain("run", "--target", "reference", "--work-dir", caseroottest.TempDir(t), "--report-dir", t.TempDir(), "-f", file)
		if code != exitOK || !strings.Contains(stdout, "PASSED on target reference") || !strings.Contains(stdout, "1 case") {
			t.Fatalf("run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		return
	}
	file := writeFile(t, "tiny.yaml", tinyGateCase)
	child := exec.Command(os.Args[0], "-test.run", "^TestTinyGate$", "-test.count", "1")
	child.Env = append(os.Environ(), tinyGateChild+"="+file)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("the run with the tiny gate: %v\n%s", err, out)
	}
	if code, _, stderr := runMain("expect", "-f", file, "--kubelet-gates", tinyGate+"=false"); code != exitOK {
		t.Errorf("expect --kubelet-gates %s=false: exit %d: %s", tinyGate, code, stderr)
	}
	if slices.Contains(framework.UpstreamGates(), tinyGate) {
		t.Errorf("UpstreamGates() = %v: volperm's own gate would be set on real components", framework.UpstreamGates())
	}
	if framework.ReleaseHas("v1.36", tinyGate) || !framework.ReleaseHas("v1.37", tinyGate) {
		t.Errorf("ReleaseHas(v1.36, v1.37) = %v, %v; want false, true (its first release)", framework.ReleaseHas("v1.36", tinyGate), framework.ReleaseHas("v1.37", tinyGate))
	}
}

// tinyGateChild names the case file TestTinyGate's own process runs.
const tinyGateChild = "VOLPERM_TEST_TINYGATE_CASE"
