package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/refnode"
	"github.com/volperm/volperm/hostfeature"
)

// tinyRemote is a target of a node elsewhere added the documented way (docs/architecture.md
// "Recipe: add a target", a node elsewhere): tinyNode's node half whose Pod is seen from
// another process (lifecycle.Seen): its Inside (lifecycle.ExecInside) runs the probe program,
// `volperm probe -request -`, with the Request on its stdin, as a target of a remote node runs
// it there (ssh, an agent). Here the other process runs on this machine, so the paths its SetUp
// gave are the paths there. It exists only in this test binary.
type tinyRemote struct {
	tinyNode
	bin string
}

// remoteRequests counts the probe programs tinyRemote ran.
var remoteRequests atomic.Int64

// remoteBin is the volperm binary tinyRemote runs as its probe program (set by the test).
var remoteBin string

func init() {
	framework.RegisterHalves("tinyremote", nil, func(o framework.TargetOptions) (framework.Node, error) {
		roots, err := caseroot.New(o.WorkDir)
		return &tinyRemote{tinyNode: tinyNode{roots}, bin: remoteBin}, err
	})
}

func (n *tinyRemote) Info() framework.TargetInfo { return framework.TargetInfo{Name: "tinyremote"} }

func (n *tinyRemote) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) framework.NodeResult {
	return n.observe(ctx, c, a, func(p *refnode.Pod) lifecycle.Pod { return remotePod{p, n.bin} })
}

// remotePod is the reference kubelet's pod, seen from the probe program bin.
type remotePod struct {
	*refnode.Pod
	bin string
}

func (p remotePod) Inside() lifecycle.Inside {
	return lifecycle.ExecInside("the tiny remote node", func(ctx context.Context, req []byte) ([]byte, error) {
		remoteRequests.Add(1)
		cmd := exec.CommandContext(ctx, p.bin, "probe", "-request", "-")
		cmd.Stdin = bytes.NewReader(req)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("volperm probe: %v: %s", err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	})
}

// TestTinyRemoteTarget: the target above runs the AtomicWriter area's cases of the conformance
// profile (volumes snapshot and probes as many users, read-only and fsGroup-masked payloads)
// through the command, every snapshot and probe by another process, and passes them. Ginkgo
// runs one suite per process (TestTinyTarget's is this binary's): the run is this test again in
// a child process of its own.
func TestTinyRemoteTarget(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root)
	if bin := os.Getenv("VOLPERM_TINY_REMOTE_BIN"); bin != "" {
		remoteBin = bin
		code, stdout, stderr := runMain("run", "--target", "reference+tinyremote", "--work-dir", caseroottest.TempDir(t),
			"--report-dir", t.TempDir(), "--label-filter", "atomicwriter && conformance")
		if code != exitOK || !strings.Contains(stdout, "PASSED on target reference+tinyremote") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		fmt.Printf("\n%s; %d requests to the probe program\n", strings.SplitN(stdout[strings.Index(stdout, "PASSED"):], "\n", 2)[0], remoteRequests.Load())
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTinyRemoteTarget$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "VOLPERM_TINY_REMOTE_BIN="+binary(t))
	out, err := cmd.CombinedOutput()
	line := regexp.MustCompile(`PASSED on target reference\+tinyremote: .*; (\d+) requests to the probe program`).FindStringSubmatch(string(out))
	if err != nil || line == nil || line[1] == "0" {
		t.Fatalf("the run in a child process: %v\n%s", err, out)
	}
	t.Log(line[0])
}
