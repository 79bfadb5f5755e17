package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/volperm/volperm/framework"
)

// A probe pod that does not start on a live node with no warning event gets one more pod
// (runPodOnceMore: a slow runtime on a loaded machine); a pod whose node stopped, or whose
// events warn, fails at once. Neither fake pod ever runs here: the verdict names both pods.
func TestPodThatDidNotStartOnALiveNodeRunsOnceMore(t *testing.T) {
	for _, tc := range []struct {
		name      string
		leaseAge  time.Duration
		warning   bool
		wantPods  []string
		wantInErr []string
	}{
		{"live node, no warning", 2 * time.Second, false, []string{"probe-0", "probe-0-s1"},
			[]string{"probe pod probe-0-s1 did not start within 1s", "before it, probe pod probe-0 did not start within 1s", "no events of the pod", "Ready=True (KubeletReady), lease renewed"}},
		{"kubelet stopped", time.Minute, false, []string{"probe-0"}, []string{"probe pod probe-0 did not start within 1s", "it is not running or cannot reach the apiserver"}},
		{"a warning event", 2 * time.Second, true, []string{"probe-0"}, []string{"probe pod probe-0 did not start within 1s", "events: FailedMount (MountVolume.SetUp failed) x3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forty := int32(40)
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}}
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: corev1.NamespaceNodeLease},
				Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: &forty, RenewTime: &metav1.MicroTime{Time: time.Now().Add(-tc.leaseAge)}}}
			client := fake.NewClientset(node, lease)
			if tc.warning {
				// The fake client's field selectors match nothing but names: the event names the pod.
				_, _ = client.CoreV1().Events("ns").Create(context.Background(), &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"},
					InvolvedObject: corev1.ObjectReference{Name: "probe-0"}, Type: corev1.EventTypeWarning, Reason: "FailedMount", Message: "MountVolume.SetUp failed", Count: 3}, metav1.CreateOptions{})
			}
			var log bytes.Buffer
			tg := &Target{opts: Options{Log: &log, ProbeImage: "volperm/probe:test", Timeouts: Timeouts{PodStart: time.Second}}, client: client, node: "w",
				namespaces: map[string]bool{}, bindings: map[string]bool{}, trackers: map[string]*podTracker{}}
			run := &caseRun{c: &framework.Case{Name: "c"}, obs: &framework.Observation{}}
			p := &probePod{name: "probe-0", pod: tg.probePodSpec("probe-0", "ns", nil), runs: []*caseRun{run}, setUp: map[string]string{}}
			last, err := tg.runPodOnceMore(context.Background(), p)
			if err == nil {
				t.Fatal("no error for pods that never ran")
			}
			for _, want := range tc.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the verdict lacks %q:\n%v", want, err)
				}
			}
			var created []string
			for _, a := range client.Actions() {
				if a.GetVerb() == "create" && a.GetResource().Resource == "pods" {
					created = append(created, a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).Name)
				}
			}
			if strings.Join(created, " ") != strings.Join(tc.wantPods, " ") {
				t.Errorf("pods created: %v, want %v", created, tc.wantPods)
			}
			if last.name != tc.wantPods[len(tc.wantPods)-1] {
				t.Errorf("the last pod is %s", last.name)
			}
			if again := len(tc.wantPods) > 1; again != strings.Contains(log.String(), "its 1 cases run again in probe-0-s1") {
				t.Errorf("log: %q", log.String())
			}
		})
	}
}

// Which failures of a pod leave its cases for another pod: a stall on a live node and an exec
// whose connection was cut (as execCall returns it); not a stall on a stopped node, a refused
// exec, nor any other failure.
func TestOnceMore(t *testing.T) {
	cut := fmt.Errorf("exec /volperm-probe in ns/probe-16: %w", permanentError{&execCutError{errors.New("read message: websocket: close 1006 (abnormal closure): unexpected EOF")}})
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"stalled on a live node", &notStartedError{msg: "probe pod p did not start within 2m0s", nodeLive: true}, "probe pod p did not start within 2m0s"},
		{"stalled on a stopped node", &notStartedError{msg: "probe pod p did not start within 2m0s"}, ""},
		{"exec cut", cut, "close 1006 (abnormal closure): unexpected EOF (the connection was cut while the command ran: it is not run again in that pod"},
		{"a probe that failed", errors.New("probe: exit status 2"), ""},
		{"none", nil, ""},
	} {
		got := onceMore(tc.err)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
