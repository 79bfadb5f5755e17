package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/incluster"
	"github.com/volperm/volperm/framework/targets/kind"
	"github.com/volperm/volperm/framework/targets/kind/nodeimage"
)

// TestInClusterRun is issue 14's in-cluster run for real: a kind cluster made here (newestWorkers'), `volperm
// cluster run --in-cluster` (the runner image built and loaded into the node) returns while the
// Job runs part of the hostPath area (nodesFocus) in the cluster; `volperm cluster retrieve`, a separate invocation
// with a client of its own, waits for it, fetches the reports and removes the run; nothing of
// the run is left in the cluster. Then hydrophone runs the runner image on the same cluster
// (hydrophoneRun). Needs root and Docker; set VOLPERM_INCLUSTER_E2E=1.
func TestInClusterRun(t *testing.T) {
	if os.Getenv("VOLPERM_INCLUSTER_E2E") != "1" {
		t.Skip("set VOLPERM_INCLUSTER_E2E=1 to create a kind cluster (needs root and Docker)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	target, probe, workers := newestWorkers(t, ctx)
	kubeconfig, name := target.Kubeconfig(), target.ClusterName()

	start := time.Now()
	code, out, errOut := runMain("cluster", "run", "--in-cluster", "--kubeconfig", kubeconfig, "--kind-cluster", name,
		"--focus", `\[hostpath\] `+nodesFocus, "--profile", "conformance", "--label-filter", "!runtime-defined", "--nodes", workers, "--accept-known-differences")
	if code != exitOK {
		t.Fatalf("cluster run: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("cluster run returned in %s: %s", time.Since(start).Round(100*time.Millisecond), strings.TrimSpace(out))
	// The run goes on without this client: the Job's pod runs in the cluster.
	_, client, err := cluster.Client(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.BatchV1().Jobs(incluster.Namespace).Get(ctx, incluster.JobName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the run's job: %v", err)
	}
	// A second run while this one is there is refused, with what to do.
	if code, _, errOut := runMain("cluster", "run", "--in-cluster", "--kubeconfig", kubeconfig, "--image", "volperm/volperm:none"); code == exitOK || !strings.Contains(errOut, "volperm cluster retrieve") {
		t.Errorf("a second run: exit %d, %q; want a refusal naming retrieve", code, errOut)
	}

	dir := t.TempDir()
	code, out, errOut = runMain("cluster", "retrieve", "--kubeconfig", kubeconfig, "--report-dir", dir, "--wait", "20m")
	t.Logf("cluster retrieve after %s (exit %d):\n%s\n%s", time.Since(start).Round(time.Second), code, out, errOut)
	if code != exitOK {
		summary, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
		t.Fatalf("cluster retrieve: exit %d; summary.md:\n%s", code, summary)
	}
	for _, f := range []string{runnerLog, runnerJUnit, "junit.xml", "summary.json", "summary.md", "run.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was not retrieved: %v", f, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, runnerJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests int `xml:"tests,attr"`
		Cases []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(raw, &suite); err != nil {
		t.Fatal(err)
	}
	hostPath := 0
	for _, c := range suite.Cases {
		if strings.Contains(c.Name, "[hostpath]") && strings.Contains(c.Name, "[target=cluster]") {
			hostPath++
		}
	}
	if hostPath == 0 {
		t.Errorf("the retrieved JUnit has no hostPath case run on the cluster target (%d test cases)", len(suite.Cases))
	}
	t.Logf("%d hostPath cases in the retrieved JUnit", hostPath)
	var summary struct {
		NotRun []struct {
			Name    string `json:"name"`
			Message string `json:"message"`
		} `json:"notRun"`
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "summary.json")); err == nil && json.Unmarshal(raw, &summary) == nil {
		for _, n := range summary.NotRun {
			t.Logf("not run: %s: %s", n.Name, n.Message)
		}
	}
	// Nothing of the run is left.
	if _, err := client.CoreV1().Namespaces().Get(ctx, incluster.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after retrieve: %v", incluster.Namespace, err)
	}
	if _, err := client.RbacV1().ClusterRoles().Get(ctx, "volperm-run", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("clusterrole volperm-run after retrieve: %v", err)
	}
	if code, _, errOut := runMain("cluster", "retrieve", "--kubeconfig", kubeconfig, "--report-dir", t.TempDir()); code == exitOK || !strings.Contains(errOut, "no in-cluster run") {
		t.Errorf("retrieve with no run: exit %d, %q", code, errOut)
	}
	// The same runner image under hydrophone, on the same cluster (issue 34: one cluster, two
	// stages).
	hydrophoneRun(t, ctx, kubeconfig, name, probe, workers, client)
}

// newestWorkers is the kind cluster of this package's tests, nodesCluster's (issue 34: one cluster
// serves several stages: TestE2EFramework, TestInClusterRun and hydrophone, TestEveryNode,
// TestNodePools), with the label selector of its two workers of the node image's kubelet: the
// runs that certify a cluster of one release (the e2e binary, the in-cluster run, hydrophone)
// run there (--volperm-nodes, --nodes), as on a cluster of v1.37 nodes only; the worker of an
// older kubelet is TestNodePools'. The label (newestLabel), set here on those two workers, is one
// requirement, as hydrophone's --extra-args needs (it splits them at commas).
func newestWorkers(t *testing.T, ctx context.Context) (target *kind.Target, probe, selector string) {
	t.Helper()
	target, probe, _ = nodesCluster(t, ctx)
	_, client, err := cluster.Client(target.Kubeconfig(), "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cluster.ListNodes(ctx, client, "")
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"metadata":{"labels":{"` + newestLabel + `":"true"}}}`)
	labelled := 0
	for _, n := range nodes {
		if n.Kubelet != nodeimage.KubernetesVersion {
			continue
		}
		if _, err := client.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("label node %s: %v", n.Name, err)
		}
		labelled++
	}
	if labelled != 2 {
		t.Fatalf("nodes %+v: want two workers of kubelet %s", nodes, nodeimage.KubernetesVersion)
	}
	return target, probe, newestLabel + "=true"
}

// newestLabel marks newestWorkers' two workers.
const newestLabel = "volperm.dev/test-newest-kubelet"

// sharedKindCluster is makeHostPathCluster's cluster of opts (by its NameTag), shared by every test of
// this run that asks for it: made by the first, deleted by TestMain after the last test, a
// killed run's swept by the next (framework/sweep).
func sharedKindCluster(t *testing.T, ctx context.Context, opts kind.Options) (*kind.Target, string) {
	t.Helper()
	sharedKind.Lock()
	defer sharedKind.Unlock()
	if c := sharedKind.clusters[opts.NameTag]; c != nil {
		t.Logf("kind cluster %s: made by an earlier test of this run", c.target.ClusterName())
		return c.target, c.probe
	}
	target, probe, err := makeHostPathCluster(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if sharedKind.clusters == nil {
		sharedKind.clusters = map[string]*sharedCluster{}
	}
	sharedKind.clusters[opts.NameTag] = &sharedCluster{target, probe}
	return target, probe
}

// makeHostPathCluster makes the kind cluster of opts (its images built or found in the cache),
// from the kind-config the hostPath area needs; it returns the target and the probe image.
func makeHostPathCluster(ctx context.Context, opts kind.Options) (*kind.Target, string, error) {
	images, err := kind.BuildImages(ctx, nodeimage.Options{Log: os.Stderr})
	if err != nil {
		return nil, "", err
	}
	opts.NodeImage, opts.ProbeImage, opts.Log = images.Image, images.ProbeImage, os.Stderr
	target, err := kind.New(opts)
	if err != nil {
		return nil, "", err
	}
	var cases []*framework.Case
	for _, c := range catalogue.All() {
		if c.Area == framework.AreaHostPath {
			cases = append(cases, c)
		}
	}
	if _, err := target.Cluster(ctx, cases); err != nil {
		return nil, "", errors.Join(err, target.Close())
	}
	return target, images.ProbeImage, nil
}

type sharedCluster struct {
	target *kind.Target
	probe  string
}

// sharedKind holds sharedKindCluster's clusters until TestMain closes them.
var sharedKind struct {
	sync.Mutex
	clusters map[string]*sharedCluster
}

// closeSharedClusters deletes sharedKindCluster's clusters, after the package's last test.
func closeSharedClusters() error {
	sharedKind.Lock()
	defer sharedKind.Unlock()
	var errs []error
	for _, c := range sharedKind.clusters {
		errs = append(errs, c.target.Close())
	}
	sharedKind.clusters = nil
	return errors.Join(errs...)
}
