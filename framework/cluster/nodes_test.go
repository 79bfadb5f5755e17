package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/volperm/volperm/framework"
)

func node(name string, ready bool, mod func(*corev1.Node)) corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: "linux", "pool": "a"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}},
			NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.37.1", OSImage: "Debian GNU/Linux 12", KernelVersion: "6.1", ContainerRuntimeVersion: "containerd://2.1"},
		},
	}
	if mod != nil {
		mod(&n)
	}
	return n
}

// The nodes a run may use: Ready, schedulable, Linux, selected; untainted unless a selector
// names them; in name order, with why the others are left out.
func TestEligibleNodes(t *testing.T) {
	all := []corev1.Node{
		node("w2", true, nil),
		node("w1", true, nil),
		node("down", false, nil),
		node("cordoned", true, func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("win", true, func(n *corev1.Node) { n.Labels[corev1.LabelOSStable] = "windows" }),
		node("cp", true, func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
		}),
		node("other", true, func(n *corev1.Node) { n.Labels["pool"] = "b" }),
	}
	names := func(ns []NodeInfo) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	e := eligibleNodes(all, labels.Everything(), true, time.Now())
	got, why := e.nodes, e.why
	if want := []string{"other", "w1", "w2"}; !slices.Equal(names(got), want) {
		t.Errorf("every node: %v, want %v", names(got), want)
	}
	if why != "1 cordoned, 1 not Linux, 1 not Ready, 1 tainted NoSchedule: node-role.kubernetes.io/control-plane" {
		t.Errorf("why: %q", why)
	}
	sel, _ := labels.Parse("pool=a")
	if got := eligibleNodes(all, sel, false, time.Now()).nodes; !slices.Equal(names(got), []string{"cp", "w1", "w2"}) {
		t.Errorf("pool=a: %v (a selector takes a tainted node)", names(got))
	}
}

// A node still starting (not Ready, or Ready under the node lifecycle controller's not-ready
// taint) may become eligible: ListNodes asks again when none is eligible; one created a moment
// ago is joining, and ListNodes waits for it even when others are eligible. A control plane's
// taint or a cordon will not go away by itself, and a node NotReady for long is not joining.
func TestEligibleNodesStarting(t *testing.T) {
	now := time.Now()
	taint := func(key string) func(*corev1.Node) {
		return func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: key, Effect: corev1.TaintEffectNoSchedule}} }
	}
	young := func(mod func(*corev1.Node)) func(*corev1.Node) {
		return func(n *corev1.Node) {
			n.CreationTimestamp = metav1.NewTime(now.Add(-20 * time.Second))
			if mod != nil {
				mod(n)
			}
		}
	}
	for _, tc := range []struct {
		name              string
		node              corev1.Node
		starting, joining bool
	}{
		{"not Ready, for long", node("n", false, nil), true, false},
		{"not Ready, just joined", node("n", false, young(nil)), true, true},
		{"not-ready taint, just joined", node("n", true, young(taint(corev1.TaintNodeNotReady))), true, true},
		{"network-unavailable taint", node("n", true, taint(corev1.TaintNodeNetworkUnavailable)), true, false},
		{"control plane, just joined", node("n", true, young(taint("node-role.kubernetes.io/control-plane"))), false, false},
		{"cordoned, just joined", node("n", true, young(func(n *corev1.Node) { n.Spec.Unschedulable = true })), false, false},
	} {
		e := eligibleNodes([]corev1.Node{tc.node, node("ok", true, nil)}, labels.Everything(), true, now)
		if len(e.nodes) != 1 || e.starting != tc.starting || e.joining != tc.joining {
			t.Errorf("%s: eligible %v, starting %v, joining %v (%s); want the other node, starting %v, joining %v", tc.name, e.nodes, e.starting, e.joining, e.why, tc.starting, tc.joining)
		}
	}
}

// Pools: one per kubelet release, OS image and runtime, in the order of their first node;
// everyNode: a pool per node.
func TestPools(t *testing.T) {
	n := func(name, kubelet, os string) NodeInfo {
		return NodeInfo{Name: name, Kubelet: kubelet, OSImage: os, Runtime: "containerd://2.1", Kernel: "6.1"}
	}
	nodes := []NodeInfo{n("a", "v1.37.1", "Debian"), n("b", "v1.36.3", "Debian"), n("c", "v1.37.1", "Debian"), n("d", "v1.37.1", "Ubuntu")}
	var got [][]string
	for _, p := range Pools(nodes, false) {
		var names []string
		for _, m := range p {
			names = append(names, m.Name)
		}
		got = append(got, names)
	}
	if len(got) != 3 || !slices.Equal(got[0], []string{"a", "c"}) || !slices.Equal(got[1], []string{"b"}) || !slices.Equal(got[2], []string{"d"}) {
		t.Errorf("pools %v", got)
	}
	if len(Pools(nodes, true)) != 4 {
		t.Errorf("every node: %d pools", len(Pools(nodes, true)))
	}
}

// split deals the cases in contiguous runs, as even as can be, none lost.
func TestSplit(t *testing.T) {
	var cases []*framework.Case
	for range 7 {
		cases = append(cases, &framework.Case{})
	}
	parts := split(cases, 3)
	total := 0
	for _, p := range parts {
		if len(p) < 2 || len(p) > 3 {
			t.Errorf("parts of %d", len(p))
		}
		total += len(p)
	}
	if total != 7 || parts[0][0] != cases[0] || parts[2][len(parts[2])-1] != cases[6] {
		t.Errorf("split lost or reordered cases")
	}
}

// ListNodesLeftOut waits for a worker that joined a moment ago and is not Ready yet, though the
// other worker is eligible, and names what it leaves out (the control plane).
func TestListNodesWaitsForAJoiningNode(t *testing.T) {
	joined := metav1.NewTime(time.Now().Add(-10 * time.Second))
	w2 := node("w2", false, func(n *corev1.Node) { n.CreationTimestamp = joined })
	cp := node("cp", true, func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	})
	w1 := node("w1", true, nil)
	client := fake.NewClientset(&cp, &w1, &w2)
	ctx := context.Background()
	go func() {
		time.Sleep(1500 * time.Millisecond)
		w2.Status.Conditions[0].Status = corev1.ConditionTrue
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, &w2, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	nodes, leftOut, err := ListNodesLeftOut(ctx, client, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"w1", "w2"}) || leftOut != "1 tainted NoSchedule: node-role.kubernetes.io/control-plane" {
		t.Errorf("nodes %v, left out %q after %s: want w1 and w2, the control plane left out", names, leftOut, time.Since(start))
	}
}
