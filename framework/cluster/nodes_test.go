package cluster

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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
	got, why, _ := eligibleNodes(all, labels.Everything(), true)
	if want := []string{"other", "w1", "w2"}; !slices.Equal(names(got), want) {
		t.Errorf("every node: %v, want %v", names(got), want)
	}
	if why != "1 cordoned, 1 not Linux, 1 not Ready, 1 tainted NoSchedule: node-role.kubernetes.io/control-plane" {
		t.Errorf("why: %q", why)
	}
	sel, _ := labels.Parse("pool=a")
	if got, _, _ := eligibleNodes(all, sel, false); !slices.Equal(names(got), []string{"cp", "w1", "w2"}) {
		t.Errorf("pool=a: %v (a selector takes a tainted node)", names(got))
	}
}

// A node still starting (not Ready, or Ready under the node lifecycle controller's not-ready
// taint) may become eligible: ListNodes asks again; a control plane's taint or a cordon will
// not go away by itself.
func TestEligibleNodesStarting(t *testing.T) {
	taint := func(key string) func(*corev1.Node) {
		return func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: key, Effect: corev1.TaintEffectNoSchedule}} }
	}
	for _, tc := range []struct {
		name     string
		node     corev1.Node
		starting bool
	}{
		{"not Ready", node("n", false, nil), true},
		{"not-ready taint", node("n", true, taint(corev1.TaintNodeNotReady)), true},
		{"network-unavailable taint", node("n", true, taint(corev1.TaintNodeNetworkUnavailable)), true},
		{"control plane", node("n", true, taint("node-role.kubernetes.io/control-plane")), false},
		{"cordoned", node("n", true, func(n *corev1.Node) { n.Spec.Unschedulable = true }), false},
	} {
		got, why, starting := eligibleNodes([]corev1.Node{tc.node}, labels.Everything(), true)
		if len(got) != 0 || starting != tc.starting {
			t.Errorf("%s: eligible %v, starting %v (%s); want none, starting %v", tc.name, got, starting, why, tc.starting)
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
