package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/incluster"
	"github.com/volperm/volperm/framework/k8srelease"
	"github.com/volperm/volperm/framework/targets/kind"
)

// hydrophoneVersion is the hydrophone release the test runs (sigs.k8s.io/hydrophone, built here
// from the Go module proxy).
const hydrophoneVersion = "v0.8.0"

// hydrophoneRun is issue 33's hydrophone run for real, on the cluster of TestInClusterRun:
// hydrophone, built from the module proxy, deploys volperm's runner image as its conformance
// image (its pod: uid 65534, every capability dropped, an output container of a busybox image
// built here from Debian's busybox-static, as no registry is reachable), with --extra-args
// --host= the apiserver's endpoint (volperm's kind clusters have no kube-proxy) and the
// implementation certified; with hydrophone's default focus the runner certifies the cluster on
// the conformance profile through the cluster target, with the probe image the kind target
// loaded (an image volume mounts it: the runner image's files are not its) and the flexVolume
// driver installed (--volperm-flex-driver=true), so that no required case is left unrun, on the
// nodes of --volperm-nodes=NODES (newestWorkers'). hydrophone streams e2e.log, fetches
// e2e.log and junit_01.xml, reads the exit code and removes its namespace. The run must pass,
// `volperm report verify` accept the two files it copied back (the hand-in rides in
// junit_01.xml), and nothing of it stay in the cluster.
func hydrophoneRun(t *testing.T, ctx context.Context, kubeconfig, kindCluster, probe, nodes string, client kubernetes.Interface) {
	t.Helper()
	bin := buildHydrophone(t, ctx)
	runner, err := runnerImage(ctx, streams{out: io.Discard, err: os.Stderr}, "", kindCluster)
	if err != nil {
		t.Fatal(err)
	}
	busybox := busyboxImage(t, ctx, kindCluster)
	host, err := incluster.APIServerEndpoint(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// hydrophone splits --extra-args at commas and joins them with spaces: the product's space
	// stays in its value (the runner's extraArgs).
	extra := "--host=https://" + host + ",--volperm-vendor=volperm,--volperm-product=kind " + framework.ReleaseTable()[len(framework.ReleaseTable())-1].Patch + " (cluster target under hydrophone),--volperm-version=ci,--volperm-flex-driver=true,--volperm-nodes=" + nodes + ",--volperm-probe-image=" + probe
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--conformance-image", runner, "--busybox-image", busybox,
		"--extra-args", extra, "--output-dir", out, "--startup-timeout", "3m")
	start := time.Now()
	logs, err := cmd.CombinedOutput()
	t.Logf("hydrophone %s (%s, busybox %s) in %s: %v\n%s", hydrophoneVersion, runner, busybox, time.Since(start).Round(100*time.Millisecond), err, tail(string(logs)))
	if err != nil {
		t.Errorf("hydrophone: %v", err)
		hydrophoneDiagnose(t, ctx, client)
		// What hydrophone leaves when it stops early: its --cleanup removes it.
		if out, err := exec.CommandContext(ctx, bin, "--kubeconfig", kubeconfig, "--cleanup").CombinedOutput(); err != nil {
			t.Errorf("hydrophone --cleanup: %v\n%s", err, out)
		}
		t.FailNow()
	}
	e2eLog, err := os.ReadFile(filepath.Join(out, runnerLog))
	if err != nil || !strings.Contains(string(e2eLog), "Test Suite Passed") {
		t.Errorf("hydrophone's %s (%v): want the runner's log ending in \"Test Suite Passed\"\n%s", runnerLog, err, tail(string(e2eLog)))
	}
	entries, _ := os.ReadDir(out)
	var copied []string
	for _, e := range entries {
		copied = append(copied, e.Name())
	}
	// The hand-in: what hydrophone copied back, verified as a vendor hands it in.
	code, vout, verr := runMain("report", "verify", out)
	t.Logf("hydrophone copied %v; volperm report verify: exit %d\n%s%s", copied, code, vout, verr)
	if code != exitOK || !strings.Contains(vout, "verified") {
		t.Errorf("volperm report verify of hydrophone's %s: exit %d, want 0 (verified)", out, code)
	}
	outcomes, err := certify.ReadJUnit(filepath.Join(out, runnerJUnit))
	if err != nil {
		t.Fatalf("hydrophone fetched no readable %s: %v", runnerJUnit, err)
	}
	counts := map[string]int{}
	for _, oc := range outcomes {
		counts[oc.State]++
	}
	t.Logf("hydrophone's %s: %d cases: %v", runnerJUnit, len(outcomes), counts)
	if counts[certify.StatePassed] == 0 {
		t.Errorf("hydrophone's %s has no case that passed", runnerJUnit)
	}
	// hydrophone removes its namespace and cluster-wide RBAC at the end (Cleanup).
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := client.CoreV1().Namespaces().Get(ctx, "conformance", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("hydrophone's namespace conformance is still there: %v", err)
			break
		}
		time.Sleep(time.Second)
	}
}

// buildHydrophone installs hydrophone at hydrophoneVersion into a temporary GOBIN, with
// k8srelease's flags: the standard library is the one every other build here compiled (its
// client-go and api are v0.37.0's, at hydrophone's own versions, so they are compiled for it; held
// at v1.37.1's in the e2e module instead, -trimpath would name them at the versions hydrophone
// asks for and the e2e module's whole Kubernetes would be compiled anew: tried, issue 34).
func buildHydrophone(t *testing.T, ctx context.Context) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"install"}, k8srelease.BuildFlags...), "sigs.k8s.io/hydrophone@"+hydrophoneVersion)...)
	cmd.Env = append(append(os.Environ(), k8srelease.BuildEnv...), "GOBIN="+dir)
	cmd.Dir = dir
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install sigs.k8s.io/hydrophone@%s: %v\n%s", hydrophoneVersion, err, out)
	}
	t.Logf("hydrophone %s built in %s", hydrophoneVersion, time.Since(start).Round(100*time.Millisecond))
	return filepath.Join(dir, "hydrophone")
}

// busyboxImage is the image of hydrophone's output container (`sh -c "sleep infinity"`, then
// `cat` of the results): Debian's static busybox (installed with apt-get when missing) with sh,
// cat and sleep, imported into Docker as volperm/busybox:<sha256 of its files> and loaded into
// the nodes. Its /bin/sh is shOnPID1: busybox's sh runs `sleep` as its applet in its own
// process, which as the container's PID 1 ignores SIGTERM, so hydrophone's cleanup waited out
// the pod's 30 s grace period before its namespace went (43 s of "Waiting for Namespace
// conformance to be deleted" in CI).
func busyboxImage(t *testing.T, ctx context.Context, kindCluster string) string {
	t.Helper()
	const bb = "/bin/busybox"
	if _, err := os.Stat(bb); err != nil {
		out, err := exec.CommandContext(ctx, "apt-get", "install", "-y", "--no-install-recommends", "busybox-static").CombinedOutput()
		if err != nil {
			t.Fatalf("apt-get install busybox-static: %v\n%s", err, out)
		}
	}
	bin, err := os.ReadFile(bb)
	if err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name string
		data []byte
	}{{"bin/busybox", bin}, {"bin/sh", []byte(shOnPID1)}}
	sum := sha256.New()
	for _, f := range files {
		sum.Write(f.data)
	}
	tag := fmt.Sprintf("volperm/busybox:%x", sum.Sum(nil))[:len("volperm/busybox:")+12]
	if exec.CommandContext(ctx, "docker", "image", "inspect", tag).Run() != nil {
		var layer bytes.Buffer
		w := tar.NewWriter(&layer)
		for _, d := range []string{"bin/", "tmp/"} {
			mode := int64(0o755)
			if d == "tmp/" {
				mode = 0o1777
			}
			if err := w.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: mode}); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range files {
			if err := w.WriteHeader(&tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(f.data))}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(f.data); err != nil {
				t.Fatal(err)
			}
		}
		for _, applet := range []string{"cat", "sleep", "tar", "ls"} {
			if err := w.WriteHeader(&tar.Header{Name: "bin/" + applet, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		imp := exec.CommandContext(ctx, "docker", "import", "-", tag)
		imp.Stdin = &layer
		if out, err := imp.CombinedOutput(); err != nil {
			t.Fatalf("docker import %s: %v\n%s", tag, err, out)
		}
	}
	if err := kind.LoadImage(ctx, kindCluster, tag, os.Stderr); err != nil {
		t.Fatal(err)
	}
	return tag
}

// shOnPID1 is the busybox image's /bin/sh: busybox's sh with the same arguments in the
// background, waited for by a shell that exits on SIGTERM (a trap interrupts wait at once), as
// PID 1 or not; otherwise it exits as that sh does (checked by hand: `docker stop` of `sh -c
// "sleep infinity"` 0.1 s, was 30 s; `sh -c "exit 3"` exits 3).
const shOnPID1 = "#!/bin/busybox ash\ntrap 'exit 0' TERM INT\n/bin/busybox ash \"$@\" &\nwait $!\n"

// hydrophoneDiagnose logs the conformance pod's container states and logs.
func hydrophoneDiagnose(t *testing.T, ctx context.Context, client kubernetes.Interface) {
	t.Helper()
	pod, err := client.CoreV1().Pods("conformance").Get(ctx, "e2e-conformance-test", metav1.GetOptions{})
	if err != nil {
		t.Logf("the conformance pod: %v", err)
		return
	}
	for _, st := range pod.Status.ContainerStatuses {
		t.Logf("container %s: %+v", st.Name, st.State)
		raw, err := client.CoreV1().Pods("conformance").GetLogs(pod.Name, &corev1.PodLogOptions{Container: st.Name}).DoRaw(ctx)
		t.Logf("container %s log (%v):\n%s", st.Name, err, tail(string(raw)))
	}
}
