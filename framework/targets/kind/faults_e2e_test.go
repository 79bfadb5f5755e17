package kind_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/owner"
	"github.com/volperm/volperm/framework/sweep"
	"github.com/volperm/volperm/framework/targets/kind"
)

// faultsEnv turns TestKindFaults on (it needs root and Docker, and creates a kind cluster).
const faultsEnv = "VOLPERM_KIND_FAULTS_E2E"

// faultCases run in every fault scenario, all in the cell "both gates on" (no restart). The
// first gets probe pod probe-0 of its own (its fsGroup); the next two share probe-1; the last
// two are admission only (no pod), so no node fault touches them.
var faultCases = []string{
	"emptyDir mode 0750 with fsGroup 2000 lets uid 1004 of group 2000 create (KEP story 1)",
	"emptyDir mode 0750 keeps uid 1003 from listing and creating (KEP story 1)",
	"emptyDir mode 01777 on the default medium gives /tmp behaviour to uids 1001 and 1002 (KEP story 2)",
	"emptyDir mode -1 at admission, both gates on",
	"emptyDir mode 0000 at admission, both gates on",
}

// podCases are the indexes of faultCases that have a probe pod.
var podCases = []int{0, 1, 2}

const (
	apiserverManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
	heldManifest      = "/etc/kubernetes/volperm-held-kube-apiserver.yaml"
	testFinalizer     = "volperm.dev/fault-test"
	foreignFinalizer  = "example.com/keep"
)

// TestKindFaults runs faultCases on one kind cluster (a control-plane node and a worker that
// runs the probe pods) under faults injected at precise moments through cluster.Hooks: the
// apiserver killed mid-batch (and back: every case passes), the apiserver kept away longer
// than the target's bound, the worker paused for longer than the pod start timeout, a probe
// pod evicted before it is read, a namespace stuck terminating on finalizers (this run's and
// someone else's), and a killed run's stuck namespace left to `volperm cleanup`. The affected
// cases must get a verdict naming the fault, the others must agree with the oracle, no
// scenario may take longer than its bound, and afterwards nothing of the run is left on the
// cluster, and no container of the cluster on the machine. Set VOLPERM_KIND_FAULTS_E2E=1.
func TestKindFaults(t *testing.T) {
	if os.Getenv(faultsEnv) != "1" {
		t.Skip("set " + faultsEnv + "=1 to inject faults into a kind cluster (needs root and Docker)")
	}
	begin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	nodeImage, probe := buildImages(t, ctx)
	logs := &logTee{t: t}
	target, err := kind.New(kind.Options{NodeImage: nodeImage, ProbeImage: probe, Log: logs, Workers: 1, NameTag: "faults"})
	if err != nil {
		t.Fatal(err)
	}
	var report []string
	var clusterName string
	t.Cleanup(func() {
		start := time.Now()
		if err := target.Close(); err != nil {
			t.Error(err)
		}
		if left := clusterContainers(t, clusterName); len(left) > 0 {
			t.Errorf("containers of cluster %s left: %q", clusterName, left)
		}
		t.Logf("cluster deleted in %s", time.Since(start).Round(100*time.Millisecond))
		t.Logf("what the run reported, per fault:\n%s", strings.Join(report, "\n"))
		t.Logf("TestKindFaults: %s in all, cluster creation included", time.Since(begin).Round(time.Second))
	})

	byName := map[string]*framework.Case{}
	for _, c := range catalogue.All() {
		byName[c.Name] = c
	}
	var cases []*framework.Case
	for _, n := range faultCases {
		c := byName[n]
		if c == nil {
			t.Fatalf("case %q is not in the catalogue", n)
		}
		cases = append(cases, c)
	}
	start := time.Now()
	ct, err := target.Cluster(ctx, cases)
	if err != nil {
		t.Fatal(err)
	}
	cp, worker := target.NodeContainers()
	clusterName = strings.TrimSuffix(cp, "-control-plane")
	client := ct.Client()
	t.Logf("cluster %s up in %s: the apiserver on %s, the probe pods on %s", clusterName, time.Since(start).Round(100*time.Millisecond), cp, worker)
	if cp == worker {
		t.Fatal("the probe pods run on the control-plane node: pausing it would pause the apiserver")
	}

	// scenario runs one fault as a subtest, bounded; report gets its time and verdicts.
	scenario := func(name string, limit time.Duration, fn func(t *testing.T, verdicts *[]string)) {
		start := time.Now()
		var verdicts []string
		ok := t.Run(name, func(t *testing.T) { fn(t, &verdicts) })
		d := time.Since(start)
		word := "passed"
		if !ok {
			word = "FAILED"
		}
		report = append(report, fmt.Sprintf("== %s: %s in %s", name, word, d.Round(time.Second)))
		for _, v := range verdicts {
			report = append(report, "   "+v)
		}
		if d > limit {
			t.Errorf("%s took %s, more than its bound %s", name, d.Round(time.Second), limit)
		}
	}
	// check runs the cases as one batch: a case in affected must fail with a verdict holding
	// affected[i]; every other case must agree with the oracle.
	check := func(t *testing.T, verdicts *[]string, affected map[int]string) {
		t.Helper()
		start := time.Now()
		res := ct.ObserveBatch(ctx, cases)
		*verdicts = append(*verdicts, fmt.Sprintf("batch of %d cases in %s", len(cases), time.Since(start).Round(100*time.Millisecond)))
		for i, r := range res {
			verdict := "agrees with the oracle"
			switch {
			case r.Err != nil:
				verdict = "error: " + r.Err.Error()
			case len(framework.Diff(oracle.Expect(cases[i]), r.Observation)) > 0:
				verdict = "differs from the oracle: " + strings.Join(framework.Diff(oracle.Expect(cases[i]), r.Observation), "; ")
			}
			*verdicts = append(*verdicts, fmt.Sprintf("%s: %s", cases[i].Name, verdict))
			want, hit := affected[i]
			switch {
			case !hit && verdict != "agrees with the oracle":
				t.Errorf("%s is not affected by the fault, but: %s", cases[i].Name, verdict)
			case hit && (r.Err == nil || !strings.Contains(r.Err.Error(), want)):
				t.Errorf("%s: want a verdict naming the fault (%q), got: %s", cases[i].Name, want, verdict)
			}
		}
	}
	affect := func(want string, idx ...int) map[int]string {
		m := map[int]string{}
		for _, i := range idx {
			m[i] = want
		}
		return m
	}

	scenario("apiserver killed mid-batch", 4*time.Minute, func(t *testing.T, verdicts *[]string) {
		var once sync.Once
		killed := false
		ct.SetHooks(cluster.Hooks{PodCreated: func(_ context.Context, ns, pod string) {
			once.Do(func() {
				if err := dockerExec(cp, "pkill", "-KILL", "-x", "kube-apiserver"); err != nil {
					t.Errorf("kill kube-apiserver: %v", err)
					return
				}
				killed = true
				waitAPIServer(t, client, false, 30*time.Second)
				*verdicts = append(*verdicts, fmt.Sprintf("kube-apiserver killed (SIGKILL) on %s once %s/%s was created; its static pod comes back", cp, ns, pod))
			})
		}})
		defer ct.SetHooks(cluster.Hooks{})
		before := len(ct.APIServerOutages())
		check(t, verdicts, nil)
		if !killed {
			t.Error("the apiserver was not killed mid-batch")
		}
		// client-go retries a GET itself for a while (connection reset, EOF): the run sees an
		// outage when a create or an RBAC denial of the restarting apiserver reaches it.
		*verdicts = append(*verdicts, fmt.Sprintf("outages the run's calls saw and waited out: %v", ct.APIServerOutages()[before:]))
	})

	scenario("apiserver away longer than its bound", 4*time.Minute, func(t *testing.T, verdicts *[]string) {
		const bound = 15 * time.Second
		ct.SetTimeouts(cluster.Timeouts{APIServer: bound})
		var once sync.Once
		held := false
		ct.SetHooks(cluster.Hooks{PodCreated: func(_ context.Context, ns, pod string) {
			once.Do(func() {
				// Without its manifest the kubelet does not bring the apiserver back.
				if err := dockerExec(cp, "mv", apiserverManifest, heldManifest); err != nil {
					t.Errorf("hold the apiserver's manifest: %v", err)
					return
				}
				held = true
				_ = dockerExec(cp, "pkill", "-KILL", "-x", "kube-apiserver")
				waitAPIServer(t, client, false, 30*time.Second)
				*verdicts = append(*verdicts, fmt.Sprintf("kube-apiserver stopped on %s once %s/%s was created, its manifest held away; the target's bound is %s", cp, ns, pod, bound))
			})
		}})
		defer func() {
			ct.SetHooks(cluster.Hooks{})
			if held {
				start := time.Now()
				if err := dockerExec(cp, "mv", heldManifest, apiserverManifest); err != nil {
					t.Fatalf("give the apiserver its manifest back: %v", err)
				}
				waitAPIServer(t, client, true, 3*time.Minute)
				*verdicts = append(*verdicts, fmt.Sprintf("manifest back: the apiserver answered again %s later", time.Since(start).Round(100*time.Millisecond)))
			}
			ct.SetTimeouts(cluster.Timeouts{APIServer: 2 * time.Minute})
		}()
		check(t, verdicts, affect("the apiserver did not answer for ", podCases...))
	})

	scenario("worker paused longer than the pod start timeout", 3*time.Minute, func(t *testing.T, verdicts *[]string) {
		const timeout = 25 * time.Second
		ct.SetTimeouts(cluster.Timeouts{PodStart: timeout})
		var once sync.Once
		var pausedAt time.Time
		ct.SetHooks(cluster.Hooks{PodCreated: func(_ context.Context, ns, pod string) {
			once.Do(func() {
				if err := exec.Command("docker", "pause", worker).Run(); err != nil {
					t.Errorf("docker pause %s: %v", worker, err)
					return
				}
				pausedAt = time.Now()
				*verdicts = append(*verdicts, fmt.Sprintf("docker pause %s once %s/%s was created; the pod start timeout is %s", worker, ns, pod, timeout))
			})
		}})
		defer func() {
			ct.SetHooks(cluster.Hooks{})
			ct.SetTimeouts(cluster.Timeouts{PodStart: 2 * time.Minute})
			if !pausedAt.IsZero() {
				if out, err := exec.Command("docker", "unpause", worker).CombinedOutput(); err != nil {
					t.Fatalf("docker unpause %s: %v: %s", worker, err, out)
				}
				*verdicts = append(*verdicts, fmt.Sprintf("docker unpause %s after %s paused", worker, time.Since(pausedAt).Round(100*time.Millisecond)))
				waitLease(t, client, worker, time.Now(), 90*time.Second)
			}
		}()
		check(t, verdicts, affect(fmt.Sprintf("did not start within %s: ", timeout), podCases...))
	})

	scenario("probe pod evicted before it is read", 3*time.Minute, func(t *testing.T, verdicts *[]string) {
		ct.SetHooks(cluster.Hooks{PodRunning: func(ctx context.Context, ns, pod string) {
			if pod != "probe-0" {
				return
			}
			err := client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns}})
			if err != nil {
				t.Errorf("evict %s/%s: %v", ns, pod, err)
				return
			}
			waitGone(t, func(ctx context.Context) error {
				_, err := client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
				return err
			}, time.Minute)
			*verdicts = append(*verdicts, fmt.Sprintf("%s/%s evicted through the Eviction API once running, and gone before its exec", ns, pod))
		}})
		defer ct.SetHooks(cluster.Hooks{})
		check(t, verdicts, affect("evicted through the Eviction API", 0))
	})

	scenario("namespace stuck terminating", 3*time.Minute, func(t *testing.T, verdicts *[]string) {
		var once sync.Once
		var ns, pod string
		ct.SetHooks(cluster.Hooks{PodCreated: func(ctx context.Context, n, p string) {
			once.Do(func() {
				ns, pod = n, p
				patch := fmt.Appendf(nil, `{"metadata":{"finalizers":[%q]}}`, testFinalizer)
				if _, err := client.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Errorf("finalizer on %s/%s: %v", ns, pod, err)
				}
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign", Namespace: ns, Finalizers: []string{foreignFinalizer}}}
				if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Errorf("foreign configmap in %s: %v", ns, err)
				}
				*verdicts = append(*verdicts, fmt.Sprintf("finalizer %s put on the run's pod %s/%s; configmap %s/foreign without the run's labels, finalizer %s", testFinalizer, ns, pod, ns, foreignFinalizer))
			})
		}})
		check(t, verdicts, nil)
		ct.SetHooks(cluster.Hooks{})
		start := time.Now()
		mark := logs.Len()
		err := ct.Cleanup(ctx)
		took := time.Since(start)
		*verdicts = append(*verdicts, fmt.Sprintf("the run's cleanup ended in %s: %v", took.Round(100*time.Millisecond), err))
		for _, l := range logs.Since(mark) {
			if strings.Contains(l, "removed the finalizers") {
				*verdicts = append(*verdicts, "log: "+l)
			}
		}
		want := fmt.Sprintf("removed the finalizers of pods/%s (finalizers %s), this run's", pod, testFinalizer)
		if !strings.Contains(strings.Join(logs.Since(mark), "\n"), want) {
			t.Errorf("the cleanup did not say %q", want)
		}
		if err == nil || !strings.Contains(err.Error(), "namespace "+ns+" is stuck terminating, held by objects that are not this run's") ||
			!strings.Contains(err.Error(), "configmaps/foreign (finalizers "+foreignFinalizer+")") {
			t.Errorf("the cleanup's error does not name the namespace and what holds it: %v", err)
		}
		if _, err := client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("pod %s/%s, this run's, is still there: %v", ns, pod, err)
		}
		// Whoever owns the foreign finalizer finishes it; then the namespace goes.
		if _, err := client.CoreV1().ConfigMaps(ns).Patch(ctx, "foreign", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		waitGone(t, func(ctx context.Context) error {
			_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err
		}, 90*time.Second)
		*verdicts = append(*verdicts, fmt.Sprintf("foreign finalizer removed by the test: namespace %s gone %s later", ns, time.Since(start).Round(100*time.Millisecond)))
	})

	scenario("a killed run's namespace stuck terminating, then volperm cleanup", 3*time.Minute, func(t *testing.T, verdicts *[]string) {
		// A run of this machine that is no longer alive: another boot.
		dead := owner.Self()
		dead.Boot = strings.Repeat("0", 32)
		dead.PID, dead.StartTime = 1, 1
		labels := dead.Labels()
		labels["app.kubernetes.io/managed-by"] = "volperm"
		ns := framework.Namespace + "-dead-" + fmt.Sprint(time.Now().UnixNano()%1e6)
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c0-configmap-keys", Namespace: ns, Labels: labels, Finalizers: []string{testFinalizer}}}
		if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFinalizersRemaining(t, client, ns, 90*time.Second)
		dir, err := cluster.WriteRecord(cluster.Record{Owner: dead, Kubeconfig: []string{target.Kubeconfig()}, Server: "kind " + clusterName})
		if err != nil {
			t.Fatal(err)
		}
		*verdicts = append(*verdicts, fmt.Sprintf("namespace %s of %s (dead) stuck terminating on configmap %s (finalizer %s); the dead run's record of the cluster in %s", ns, dead, cm.Name, testFinalizer, dir))
		start := time.Now()
		found, err := sweep.All(ctx, sweep.Options{}) // what `volperm cleanup` runs
		*verdicts = append(*verdicts, fmt.Sprintf("volperm cleanup's sweep in %s, error %v:", time.Since(start).Round(100*time.Millisecond), err))
		hit := false
		for _, f := range found {
			*verdicts = append(*verdicts, fmt.Sprintf("  volperm cleanup: removed %s, left by a run that is no longer alive", f.Item))
			if f.Sweeper == "cluster objects" && strings.Contains(f.Item, "configmaps/"+cm.Name+" (finalizers "+testFinalizer+") in namespace "+ns) {
				hit = true
			}
		}
		if !hit {
			t.Errorf("volperm cleanup did not release the dead run's configmap %s in %s (error %v)", cm.Name, ns, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the dead run's record %s is still there", dir)
			os.RemoveAll(dir)
		}
		start = time.Now()
		waitGone(t, func(ctx context.Context) error {
			_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			return err
		}, 90*time.Second)
		*verdicts = append(*verdicts, fmt.Sprintf("namespace %s gone %s after the sweep", ns, time.Since(start).Round(100*time.Millisecond)))
	})

	scenario("after the faults", 3*time.Minute, func(t *testing.T, verdicts *[]string) {
		check(t, verdicts, nil)
		start := time.Now()
		err := ct.Cleanup(ctx)
		*verdicts = append(*verdicts, fmt.Sprintf("the run's cleanup in %s: %v", time.Since(start).Round(100*time.Millisecond), err))
		if err != nil {
			t.Error(err)
		}
		sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=volperm," + owner.LabelPID + "=" + fmt.Sprint(os.Getpid())}
		nss, err := client.CoreV1().Namespaces().List(ctx, sel)
		if err != nil || len(nss.Items) > 0 {
			t.Errorf("namespaces of the run left: %v %v", names(nss), err)
		}
		pods, err := client.CoreV1().Pods("").List(ctx, sel)
		if err != nil || len(pods.Items) > 0 {
			t.Errorf("pods of the run left: %d %v", len(pods.Items), err)
		}
		bs, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, sel)
		if err != nil || len(bs.Items) > 0 {
			t.Errorf("policy bindings of the run left: %d %v", len(bs.Items), err)
		}
		*verdicts = append(*verdicts, "no namespace, pod or policy binding with the run's labels left")
	})
}

// logTee is the target's log: to the test's log, and kept for assertions.
type logTee struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
}

func (l *logTee) Write(p []byte) (int, error) {
	s := strings.TrimRight(string(p), "\n")
	l.t.Log(s)
	l.mu.Lock()
	l.lines = append(l.lines, strings.Split(s, "\n")...)
	l.mu.Unlock()
	return len(p), nil
}

func (l *logTee) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

func (l *logTee) Since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines[n:]...)
}

func dockerExec(container string, args ...string) error {
	out, err := exec.Command("docker", append([]string{"exec", container}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker exec %s %s: %v: %s", container, strings.Join(args, " "), err, out)
	}
	return nil
}

// waitAPIServer waits until the apiserver's /readyz answers (up) or fails (down).
func waitAPIServer(t *testing.T, client kubernetes.Interface, up bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if (err == nil) == up {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("the apiserver is not %s after %s", map[bool]string{true: "up", false: "down"}[up], timeout)
}

// waitGone waits until get says NotFound.
func waitGone(t *testing.T, get func(ctx context.Context) error, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = get(ctx)
		cancel()
		if apierrors.IsNotFound(err) {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Errorf("still there after %s (%v)", timeout, err)
}

// waitLease waits until node's kubelet renews its lease after since (it runs again).
func waitLease(t *testing.T, client kubernetes.Interface, node string, since time.Time, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, node, metav1.GetOptions{})
		cancel()
		if err == nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.After(since) {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("the kubelet of %s did not renew its lease within %s", node, timeout)
}

// waitFinalizersRemaining waits until the namespace controller says that ns is held by
// finalizers.
func waitFinalizersRemaining(t *testing.T, client kubernetes.Interface, ns string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		n, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		cancel()
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NamespaceFinalizersRemaining && c.Status == corev1.ConditionTrue {
					return
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("namespace %s: no NamespaceFinalizersRemaining within %s", ns, timeout)
}

// clusterContainers are the containers of kind cluster name.
func clusterContainers(t *testing.T, name string) []string {
	t.Helper()
	if name == "" {
		return nil
	}
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}").Output()
	if err != nil {
		t.Error(err)
	}
	return strings.Fields(string(out))
}

func names(l *corev1.NamespaceList) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, n := range l.Items {
		out = append(out, n.Name)
	}
	return out
}
