package cluster

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// A vendor certifies a cluster of many nodes, often in pools that differ in kubelet release, OS
// image and container runtime (docs/certify.md "Every node"). The cluster target runs on the
// nodes ListNodes finds, grouped by Pools: each case on one node of every pool (Spread), or on
// every node.

// NodeInfo is a node as a pool sees it (its NodeSystemInfo).
type NodeInfo struct {
	Name    string `json:"name"`
	Kubelet string `json:"kubelet"`
	OSImage string `json:"osImage"`
	Kernel  string `json:"kernel"`
	Runtime string `json:"runtime"`
}

// Pool is the key of n's pool: its kubelet release, OS image and container runtime.
func (n NodeInfo) Pool() string {
	return fmt.Sprintf("kubelet %s, %s, %s", n.Kubelet, n.OSImage, n.Runtime)
}

// String names the node and what it runs.
func (n NodeInfo) String() string {
	return fmt.Sprintf("%s (%s, kernel %s)", n.Name, n.Pool(), n.Kernel)
}

// ListNodes lists the nodes the cluster target may run on: Ready, schedulable and Linux,
// matching selector (a label selector); with no selector, a node tainted NoSchedule or NoExecute
// (a control plane of several nodes) is not schedulable either, while a selector that names it
// takes it (the probe pods tolerate every taint).
func ListNodes(ctx context.Context, c kubernetes.Interface, selector string) ([]NodeInfo, error) {
	nodes, _, err := ListNodesLeftOut(ctx, c, selector)
	return nodes, err
}

// ListNodesLeftOut is ListNodes, and why the cluster's other nodes are left out ("1 not Ready,
// 1 tainted NoSchedule: node-role.kubernetes.io/control-plane"; "" none), which the target's
// details name: a node NotReady when the run starts is not judged, and the reviewer must see it.
func ListNodesLeftOut(ctx context.Context, c kubernetes.Interface, selector string) ([]NodeInfo, string, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, "", fmt.Errorf("--nodes %q: %w", selector, err)
	}
	// A node that has just joined is not Ready, then Ready a moment before the node lifecycle
	// controller lifts its node.kubernetes.io/not-ready taint (kind waits for the control plane
	// only). Ask again for a while when no node is eligible yet but one may become so, or when
	// a node that joined a moment ago is still starting: a run begun right after the cluster was
	// made would otherwise leave that node out.
	deadline := time.Now().Add(nodesSettle)
	for {
		list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", fmt.Errorf("list nodes: %w", err)
		}
		e := eligibleNodes(list.Items, sel, selector == "", time.Now())
		late := time.Now().After(deadline)
		if len(e.nodes) > 0 && (!e.joining || late) {
			return e.nodes, e.why, nil
		}
		if len(e.nodes) == 0 && (!e.starting || late) {
			return nil, "", fmt.Errorf("no node to run on among %d (%s)", len(list.Items), e.why)
		}
		select {
		case <-ctx.Done():
			return nil, "", fmt.Errorf("waiting for the starting nodes among %d (%s): %w", len(list.Items), e.why, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// nodesSettle is how long ListNodes waits for a starting node (eligibleNodes).
const nodesSettle = 60 * time.Second

// joiningAge: a starting node created less than this ago is joining the cluster, not broken.
const joiningAge = 3 * time.Minute

// eligibility is what eligibleNodes found.
type eligibility struct {
	nodes []NodeInfo
	// why says why the others are left out.
	why string
	// starting: one of those may be a node still starting (not Ready, or only a starting
	// taint); joining: such a node was created less than joiningAge ago.
	starting, joining bool
}

// startingTaints are the taints a node carries while it starts (the node lifecycle
// controller's), lifted once it is Ready.
var startingTaints = []string{corev1.TaintNodeNotReady, corev1.TaintNodeNetworkUnavailable}

// eligibleNodes are the Ready, schedulable Linux nodes of all that sel selects, in name order,
// why the others are not, and whether one of those is starting, or joining (at now); with
// untainted, a node tainted NoSchedule or NoExecute is not schedulable.
func eligibleNodes(all []corev1.Node, sel labels.Selector, untainted bool, now time.Time) eligibility {
	var e eligibility
	var out []NodeInfo
	count := map[string]int{}
	for _, n := range all {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		switch {
		case !sel.Matches(labels.Set(n.Labels)):
			count["not selected"]++
		case !ready:
			count["not Ready"]++
			e.starting = true
			e.joining = e.joining || now.Sub(n.CreationTimestamp.Time) < joiningAge
		case n.Spec.Unschedulable:
			count["cordoned"]++
		case untainted && len(taints(n)) > 0:
			keys := taints(n)
			count["tainted NoSchedule: "+strings.Join(keys, " ")]++
			if !slices.ContainsFunc(keys, func(k string) bool { return !slices.Contains(startingTaints, k) }) {
				e.starting = true
				e.joining = e.joining || now.Sub(n.CreationTimestamp.Time) < joiningAge
			}
		case n.Labels[corev1.LabelOSStable] != "" && n.Labels[corev1.LabelOSStable] != "linux":
			count["not Linux"]++
		default:
			i := n.Status.NodeInfo
			out = append(out, NodeInfo{Name: n.Name, Kubelet: i.KubeletVersion, OSImage: i.OSImage, Kernel: i.KernelVersion, Runtime: i.ContainerRuntimeVersion})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	var why []string
	for _, k := range sortedKeys(count) {
		why = append(why, fmt.Sprintf("%d %s", count[k], k))
	}
	e.nodes, e.why = out, strings.Join(why, ", ")
	return e
}

// Pools groups nodes by Pool, the pools in order of their first node (nodes in name order:
// the pools in order of their first node's name); with everyNode, each node is a pool of its
// own.
func Pools(nodes []NodeInfo, everyNode bool) [][]NodeInfo {
	return groupInOrder(nodes, func(n NodeInfo) string {
		if everyNode {
			return n.Name
		}
		return n.Pool()
	})
}

// groupInOrder groups items by key, the groups in the order their keys first appear, the items
// in their order; an item whose key is "" is a group of its own.
func groupInOrder[T any](items []T, key func(T) string) [][]T {
	var groups [][]T
	index := map[string]int{}
	for _, it := range items {
		k := key(it)
		i, ok := index[k]
		if k == "" || !ok {
			i = len(groups)
			groups = append(groups, nil)
			if k != "" {
				index[k] = i
			}
		}
		groups[i] = append(groups[i], it)
	}
	return groups
}

// taints are the keys of n's taints that keep pods without a toleration away (NoSchedule,
// NoExecute).
func taints(n corev1.Node) []string {
	var keys []string
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			keys = append(keys, t.Key)
		}
	}
	return keys
}
