//go:build !volperm_k8s_pre_1_37

package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"

	"github.com/volperm/volperm/framework/execproto"
)

// kubeletAdmit is v1.37's predicate admit handler: getNode(ctx, useCache), Admit(ctx, attrs).
func kubeletAdmit(node *corev1.Node, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	h := lifecycle.NewPredicateAdmitHandler(func(context.Context, bool) (*corev1.Node, error) { return node, nil }, &lifecycle.AdmissionFailureHandlerStub{}, noPluginResources)
	return h.Admit(context.Background(), attrs)
}

// declaredFeaturesRejection is v1.37's declared-features admit handler (pkg/kubelet/lifecycle
// handlers.go NewDeclaredFeaturesAdmitHandler, the kubelet's last): the node's features as
// kubelet_node_declared_features.go discovers them with the real framework (ndf.DefaultFramework:
// VolumeBindMountOptions from the gate and the runtime's mount_options), then Admit; nil
// when it admits (docs/spec.md [mounts.bind-mount-options]).
func (n *node) declaredFeaturesRejection() *execproto.Rejection {
	v := versionutil.MustParse("v1.37.1")
	cfg := &ndf.NodeConfiguration{FeatureGates: gateAdapter{}, Version: v, RuntimeFeatures: ndf.RuntimeFeatures{MountOptions: !n.noMountOptions}}
	var declared []string
	_ = withGates(n.gates, func() error { declared = ndf.DefaultFramework.DiscoverNodeFeatures(cfg); return nil })
	h := lifecycle.NewDeclaredFeaturesAdmitHandler(ndf.DefaultFramework, ndf.DefaultFramework.MustMapSorted(declared), v)
	r := h.Admit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: n.pod})
	if r.Admit {
		return nil
	}
	return &execproto.Rejection{Reason: r.Reason, Message: "Pod was rejected: " + r.Message}
}

// gateAdapter is the kubelet's FeatureGateAdapter (kubelet_node_declared_features.go): the
// process's feature gates by name.
type gateAdapter struct{}

func (gateAdapter) Enabled(key string) bool {
	return utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(key))
}
