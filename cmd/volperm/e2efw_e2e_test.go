package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/report"
)

// TestE2EFramework is issue 14's e2e-framework adapter for real: volperm-e2e.test (the e2e/
// module: volperm's suites inside a test binary of k8s.io/kubernetes/test/e2e/framework) built
// here and run as upstream's e2e.test is run for a conformance run (--kubeconfig, --provider,
// --report-dir, -ginkgo.focus) against a kind cluster made here. It checks the framework's
// junit_01.xml and volperm's reports beside it, then runs one case with a probe image no node
// has, which must fail and dump its node as the framework does. Needs root and Docker; set
// VOLPERM_INCLUSTER_E2E=1 (CI runs it with the in-cluster run).
func TestE2EFramework(t *testing.T) {
	if os.Getenv("VOLPERM_INCLUSTER_E2E") != "1" {
		t.Skip("set VOLPERM_INCLUSTER_E2E=1 to create a kind cluster (needs root and Docker)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "volperm-e2e.test")
	start := time.Now()
	// Built as make e2e-binary builds it: Kubernetes code the one way (k8srelease.BuildFlags).
	build := exec.CommandContext(ctx, "go", append(append([]string{"test"}, k8srelease.BuildFlags...), "-c", "-o", bin, "./volperm-e2e")...)
	build.Dir = filepath.Join("..", "..", "e2e")
	build.Env = append(os.Environ(), k8srelease.BuildEnv...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build volperm-e2e.test: %v\n%s", err, out)
	}
	t.Logf("volperm-e2e.test built in %s", time.Since(start).Round(100*time.Millisecond))
	target, probeImage, workers := newestWorkers(t, ctx)
	kubeconfig := target.Kubeconfig()

	e2e := func(name string, args ...string) (dir, out string, code int) {
		dir = filepath.Join(t.TempDir(), name)
		cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig, "--provider", "skeleton", "--report-dir", dir,
			"--volperm-nodes", workers, "-ginkgo.no-color", "-ginkgo.label-filter", "!runtime-defined"}, args...)...)
		cmd.Env = unrequired() // the kubelet-restart cases are not run on the cluster target
		raw, err := cmd.CombinedOutput()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("%s: %v", name, err)
		}
		return dir, string(raw), cmd.ProcessState.ExitCode()
	}

	impl := filepath.Join(t.TempDir(), "implementation.yaml")
	if err := os.WriteFile(impl, []byte("vendor: Example Corp\nproduct: Example Distribution\nversion: 1.37.1-example.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	dir, out, code := e2e("hostpath", "--volperm-probe-image", probeImage, "-ginkgo.focus", `\[sig-storage\] volperm \[hostpath\] `+nodesFocus,
		"--volperm-implementation", impl)
	t.Logf("volperm-e2e.test, the hostPath area: exit %d in %s", code, time.Since(start).Round(100*time.Millisecond))
	if code != 0 {
		t.Fatalf("exit %d; want 0\n%s", code, tail(out))
	}
	// The framework's JUnit (its own writer: "[It] " and the full text) and volperm's name the
	// same specs, and the framework's has run the hostPath cases.
	type junit struct {
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testsuite>testcase"`
	}
	read := func(path string) (names []string, ran int) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var j junit
		if err := xml.Unmarshal(raw, &j); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range j.Cases {
			n := strings.TrimPrefix(c.Name, "[It] ")
			if !strings.HasPrefix(n, "[sig-storage] volperm [hostpath] ") || !strings.HasSuffix(n, "[target=cluster]") {
				continue
			}
			names = append(names, n)
			if c.Skipped == nil {
				ran++
			}
		}
		slices.Sort(names)
		return names, ran
	}
	fwNames, ran := read(filepath.Join(dir, "junit_01.xml"))
	vpNames, _ := read(filepath.Join(dir, "volperm", "junit.xml"))
	if len(fwNames) == 0 || !slices.Equal(fwNames, vpNames) {
		t.Errorf("junit_01.xml names %d hostPath specs, volperm/junit.xml %d: want the same ones", len(fwNames), len(vpNames))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "volperm", "summary.json"))
	if err != nil {
		t.Fatalf("volperm's summary beside the framework's report: %v\n%s", err, tail(out))
	}
	var s report.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	t.Logf("junit_01.xml: %d hostPath specs, %d run; volperm/summary.json: %s", len(fwNames), ran, s.Totals)
	if ran == 0 || s.Totals.Passed != ran || s.Totals.Failed != 0 {
		t.Errorf("junit_01.xml ran %d hostPath cases, volperm's summary %s: want the same, none failed", ran, s.Totals)
	}
	if s.Target.Name != cluster.Name || s.Selection == nil || s.Selection.Focus == "" {
		t.Errorf("summary target %q, selection %+v: want the cluster target and the focus", s.Target.Name, s.Selection)
	}
	if _, err := os.Stat(filepath.Join(dir, "volperm", "summary.md")); err != nil {
		t.Error(err)
	}
	// volperm's reports are a hand-in `volperm report verify` reads: the files agree with each
	// other; what it refuses is what this run is, one area (a focus) with cases not run.
	code, vout, verr := runMain("report", "verify", filepath.Join(dir, "volperm"))
	// Notes (a development build's) are not problems.
	var problems []string
	for _, l := range strings.Split(strings.TrimSpace(vout), "\n") {
		if !strings.Contains(l, ": note: ") {
			problems = append(problems, l)
		}
	}
	t.Logf("volperm report verify: exit %d\n%s%s", code, vout, verr)
	// The cases not run (those after a kubelet restart) are not applicable on a cluster volperm
	// does not control (needs.NodeControl): the focus is the one problem verify names.
	if code != exitFailed || len(problems) != 2 || !strings.Contains(vout, "the run left cases out") || !strings.Contains(vout, "1 problem(s)") ||
		s.Totals.Skipped == 0 || s.Totals.NotApplicable != s.Totals.Skipped {
		t.Errorf("volperm report verify: exit %d, %d not run (%d not applicable); want 1 with the focus as its only problem, every case not run not applicable\n%s%s",
			code, s.Totals.Skipped, s.Totals.NotApplicable, vout, verr)
	}

	// A case that fails (its probe image is on no node): the run exits 1 and the node is dumped.
	_, out, code = e2e("failing", "--volperm-probe-image", "volperm/probe:absent", "-ginkgo.focus", `\[hostpath\] hostPath type Directory with a directory at the path \[`)
	if code != 1 || !strings.Contains(out, "[FAIL]") || !strings.Contains(out, "Logging node info for node") {
		t.Errorf("a failing case: exit %d; want 1, the failure and the framework's node dump\n%s", code, tail(out))
	}

	// The run's namespaces (labelled as the framework labels its own) are gone.
	_, client, err := cluster.Client(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	left, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: "e2e-framework=volperm"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range left.Items {
		if ns.DeletionTimestamp == nil {
			t.Errorf("namespace %s is left (labels %v)", ns.Name, ns.Labels)
		}
	}
}
