package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/framework/targets/kind"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
	"github.com/volperm/volperm/hostfeature"
)

// nodesFocus is the part of the hostPath area the tests of a cluster run (54 of its 159 cases:
// the types Directory, File and Socket, with their failures, fsGroup and restart cases):
// TestEveryNode and TestNodePools test how the cluster target spreads cases over nodes and
// pools, TestInClusterRun and TestE2EFramework how a run gets into the cluster and its reports
// out; the kind catalogue runs the whole area on the same code (issue 34: TestEveryNode took 340
// s of CI with the whole area, the in-cluster run's retrieve 110 s).
const nodesFocus = `hostPath type (Directory|File|Socket) `

// nodesCluster is the kind cluster of this package's tests, made once for all of them (issue 34:
// one cluster per need, not per test; newestWorkers is the others' view of it): a control plane and three workers, two of the node
// image's kubelet (one pool) and one of kubelet v1.36.3 (swapped in as kind@matrix does: a pool
// of its own). It returns the kind target, the probe image and the older release.
func nodesCluster(t *testing.T, ctx context.Context) (*kind.Target, string, string) {
	t.Helper()
	old := "v1.36.3"
	bin, err := k8srelease.Kubelet(ctx, old, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	newest := nodeimage.KubernetesVersion
	target, probeImage := sharedKindCluster(t, ctx, kind.Options{NameTag: "nodes",
		KubeletReleases: []string{newest, newest, old}, KubeletBinaries: map[string]string{old: bin}})
	waitForWorkers(t, ctx, target.Kubeconfig(), 3)
	return target, probeImage, old
}

// TestEveryNode is issue 14's every-node run for real, on nodesCluster's two workers of the node
// image's kubelet: `volperm run --target cluster` with --nodes naming one of them, then both
// (they are one pool, the cases split between them). Both runs give the same verdict for every
// case, the second names both workers in its summary (By node) and the nodes it left out, and
// the test logs the wall times and their ratio. Needs root and Docker; set VOLPERM_NODES_E2E=1.
func TestEveryNode(t *testing.T) {
	if os.Getenv("VOLPERM_NODES_E2E") != "1" {
		t.Skip("set VOLPERM_NODES_E2E=1 to create a kind cluster of four nodes (needs root and Docker)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	target, probeImage, _ := nodesCluster(t, ctx)
	kubeconfig := target.Kubeconfig()
	_, client, err := cluster.Client(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	all, err := cluster.ListNodes(ctx, client, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range all {
		if n.Kubelet == nodeimage.KubernetesVersion {
			names = append(names, n.Name)
		}
	}
	selector := "kubernetes.io/hostname in (" + strings.Join(names, ",") + ")"
	nodes, err := cluster.ListNodes(ctx, client, selector)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || len(cluster.Pools(nodes, false)) != 1 {
		t.Fatalf("nodes %v of %q: want the two workers of kubelet %s, one pool", nodes, selector, nodeimage.KubernetesVersion)
	}
	bin := binary(t)
	run := func(name string, extra ...string) (*report.Summary, time.Duration) {
		dir := filepath.Join(t.TempDir(), name)
		args := append([]string{"run", "--target", "cluster", "--kubeconfig", kubeconfig, "--probe-image", probeImage,
			"--profile", "conformance", "--label-filter", "hostpath && !runtime-defined", "--focus", nodesFocus, "--report-dir", dir}, extra...)
		// The binary: one Ginkgo suite per process.
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = unrequired()
		var errBuf strings.Builder
		cmd.Stderr = &errBuf
		start := time.Now()
		runErr := cmd.Run()
		took := time.Since(start)
		code, errOut := cmd.ProcessState.ExitCode(), errBuf.String()
		if runErr != nil && code < 0 {
			t.Fatalf("%s: %v", name, runErr)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatalf("%s: exit %d, no summary: %v\n%s", name, code, err, errOut)
		}
		var s report.Summary
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: exit %d in %s: %s; nodes %+v", name, code, took.Round(100*time.Millisecond), s.Totals, s.Nodes)
		if code != exitOK {
			md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
			t.Fatalf("%s: exit %d\n%s", name, code, md)
		}
		return &s, took
	}
	one, tookOne := run("one-worker", "--nodes", "kubernetes.io/hostname="+nodes[0].Name)
	two, tookTwo := run("two-workers", "--nodes", selector)
	if one.Totals != two.Totals || one.Totals.Passed == 0 {
		t.Errorf("one worker %s, two workers %s: want the same verdicts", one.Totals, two.Totals)
	}
	verdicts := func(s *report.Summary) []string {
		var out []string
		for _, f := range append(slices.Clone(s.Failures), s.NotRun...) {
			out = append(out, f.Name+" "+f.State)
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(verdicts(one), verdicts(two)) {
		t.Errorf("the cases that did not pass differ:\none worker %q\ntwo workers %q", verdicts(one), verdicts(two))
	}
	var observed []string
	for _, g := range two.Nodes {
		observed = append(observed, g.Name)
		if g.Total == 0 {
			t.Errorf("node %s observed no case", g.Name)
		}
	}
	if len(two.Nodes) != 2 || !strings.Contains(strings.Join(observed, " "), nodes[1].Name) {
		t.Errorf("the two-worker run's nodes %q: want both workers", observed)
	}
	if lo := two.Target.Details["nodesLeftOut"]; lo != "2 not selected" {
		t.Errorf("the target's details name the nodes left out as %q; want the control plane and the older worker, not selected", lo)
	}
	if len(two.Pools) != 1 || len(two.Pools[0].Nodes) != 2 || two.Pools[0].Total != two.Totals.Total {
		t.Errorf("the two-worker run's pools %+v: want one pool of both workers counting every case", two.Pools)
	}
	if len(one.Nodes) != 0 {
		t.Errorf("the one-worker run names nodes %+v (one node: no spread)", one.Nodes)
	}
	t.Logf("hostPath area (%d cases): one worker %s, two workers %s, ratio %.2f", two.Totals.Total, tookOne.Round(100*time.Millisecond), tookTwo.Round(100*time.Millisecond), tookOne.Seconds()/tookTwo.Seconds())
}

// TestNodePools: nodesCluster's workers run kubelets of two releases (v1.37.1 twice and v1.36.3)
// and are two pools; `volperm run --target cluster` makes them the cells kube-apiserver v1.37 x
// kubelet v1.37 and x kubelet v1.36 (a release matrix), each on its pool's nodes (the v1.37
// pool's cases split over its two), names every worker and the control plane it left out (its
// taint). Needs root and Docker; VOLPERM_NODES_E2E=1.
func TestNodePools(t *testing.T) {
	if os.Getenv("VOLPERM_NODES_E2E") != "1" {
		t.Skip("set VOLPERM_NODES_E2E=1 to create a kind cluster of four nodes (needs root and Docker)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	target, probeImage, old := nodesCluster(t, ctx)
	dir := filepath.Join(t.TempDir(), "pools")
	start := time.Now()
	// A ConformanceReport of a subset: a claim without --implementation, which is no
	// certification (issue 51: a certification runs the whole catalogue) but writes the report.
	cmd := exec.CommandContext(ctx, binary(t), "run", "--target", "cluster", "--kubeconfig", target.Kubeconfig(), "--probe-image", probeImage,
		"--profile", "conformance", "--label-filter", "hostpath && !runtime-defined", "--focus", nodesFocus, "--accept-known-differences", "--report-dir", dir,
		"--claim", framework.FeatureUserNamespaces)
	cmd.Env = unrequired()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	raw, rerr := os.ReadFile(filepath.Join(dir, "summary.json"))
	if rerr != nil {
		t.Fatalf("no summary (%v): %v\n%s", err, rerr, out)
	}
	var s report.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %v in %s: %s; releases %+v; nodes %+v", err, took.Round(100*time.Millisecond), s.Totals, s.Releases, s.Nodes)
	if err != nil {
		md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
		t.Fatalf("run: %v\n%s", err, md)
	}
	kubelets := map[string]bool{}
	for _, r := range s.Releases {
		if r.Passed+r.Failed > 0 {
			kubelets[r.Kubelet] = true
		}
	}
	if !kubelets["v1.37"] || !kubelets["v1.36"] {
		t.Errorf("cells run: %v; want kubelet v1.37 and v1.36", kubelets)
	}
	if len(s.Nodes) != 3 {
		t.Errorf("nodes %+v: want every worker (the v1.37.1 pool's two, the v1.36.3 pool's one)", s.Nodes)
	}
	if lo := s.Target.Details["nodesLeftOut"]; lo != "1 tainted NoSchedule: node-role.kubernetes.io/control-plane" {
		t.Errorf("the target's details name the nodes left out as %q; want the control plane and its taint", lo)
	}
	// A verdict per pool: the v1.37 pool passes every case it ran, the v1.36 pool fails the
	// known differences of its release; the ConformanceReport has a result per pool (success
	// for v1.37: its kubelet-restart cases are not applicable on the cluster target, which has
	// no control of the node: needs.NodeControl).
	byKubelet := map[string]report.PoolGroup{}
	for _, p := range s.Pools {
		byKubelet[strings.SplitN(p.Name, ",", 2)[0]] = p
		t.Logf("pool %s on %v: %s", p.Name, p.Nodes, p.Counts)
	}
	if p := byKubelet["kubelet "+nodeimage.KubernetesVersion]; len(s.Pools) != 2 || p.Passed == 0 || p.Failed != 0 || len(p.Nodes) != 2 {
		t.Errorf("pools %+v: want two, kubelet %s's of two nodes with no failure", s.Pools, nodeimage.KubernetesVersion)
	}
	if p := byKubelet["kubelet "+old]; p.Passed == 0 || p.Failed == 0 || len(p.FailedCases) != p.Failed {
		t.Errorf("pool of kubelet %s %+v: want passes and the known differences named", old, p)
	}
	rep, err := os.ReadFile(filepath.Join(dir, certify.File))
	if err != nil {
		t.Fatal(err)
	}
	var cr certify.Report
	if err := yaml.Unmarshal(rep, &cr); err != nil {
		t.Fatal(err)
	}
	var pools []string
	for _, p := range cr.Pools {
		pools = append(pools, p.Kubelet+" "+p.Result)
	}
	slices.Sort(pools)
	if want := []string{old + " failure", "v1.37.1 success"}; !slices.Equal(pools, want) {
		t.Errorf("ConformanceReport pools %q, want %q", pools, want)
	}
}

// waitForWorkers waits (2 min at most) until n nodes are eligible for the cluster target (a
// worker whose kubelet was just swapped may be NotReady or tainted not-ready for a moment), and
// logs how long that took and what kept the others out.
func waitForWorkers(t *testing.T, ctx context.Context, kubeconfig string, n int) {
	t.Helper()
	_, client, err := cluster.Client(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		nodes, err := cluster.ListNodes(ctx, client, "")
		if err == nil && len(nodes) == n {
			t.Logf("%d nodes eligible after %s", n, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Since(start) > 2*time.Minute {
			all, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			var state []string
			for _, nd := range all.Items {
				state = append(state, fmt.Sprintf("%s: taints %v, conditions %v", nd.Name, nd.Spec.Taints, nd.Status.Conditions))
			}
			t.Fatalf("eligible nodes %v (%v), want %d:\n%s", nodes, err, n, strings.Join(state, "\n"))
		}
		time.Sleep(time.Second)
	}
}

// unrequired is this process's environment without CI and VOLPERM_REQUIRE: these runs check
// where cases run, not that every case of their focus can (a case the cluster target cannot run
// would count as a failure in a run requiring every case).
func unrequired() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "CI=") || strings.HasPrefix(kv, hostfeature.EnvRequire+"=")
	})
}
