// Package upstream is the target "upstream": the catalogue against the real Kubernetes v1.37
// code, in-process. Admission runs the kube-apiserver's defaulting, field dropping and
// validation (Admit); the node side runs the kubelet's real volume plugins (emptyDir, hostPath,
// secret, configMap, downwardAPI, projected, flexVolume) with the real mounter and host utils
// under a temporary root (ObserveNode). It is the only package that imports k8s.io/kubernetes.
// Kubernetes' feature gate is process-global, so cases run one at a time.
package upstream

import (
	"runtime/debug"
	"sync"

	"github.com/volperm/volperm/framework"
)

// Name is the name the target registers under.
const Name = "upstream"

// KubernetesVersion is the k8s.io/kubernetes module the target is built against.
const KubernetesVersion = "v1.37.1"

// caseMu makes node cases run one at a time: they flip the process-global feature gate.
var caseMu sync.Mutex

func init() {
	framework.RegisterTarget(Name, "the real Kubernetes "+KubernetesVersion+" apiserver validation and kubelet volume plugins, in-process (needs root for node-side cases)", New)
	framework.RegisterHalves(Name,
		func(opts framework.TargetOptions) (framework.APIServer, error) { return newAPIServer(opts) },
		func(opts framework.TargetOptions) (framework.Node, error) { return NewNode(opts) })
}

// New builds the upstream target: the upstream apiserver with the upstream kubelet.
func New(opts framework.TargetOptions) (framework.Target, error) {
	api, err := newAPIServer(opts)
	if err != nil {
		return nil, err
	}
	node, err := NewNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewPair(Name, api, node), nil
}

// info names the upstream code and the Kubernetes modules it runs (a copy of what buildInfo
// read once: the pair asks with every case).
func info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Version: KubernetesVersion, Details: map[string]string{}}
	for k, v := range buildInfo() {
		info.Details[k] = v
	}
	return info
}

// buildInfo is the versions of the Kubernetes modules this binary was built with.
var buildInfo = sync.OnceValue(func() map[string]string {
	versions := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			switch m.Path {
			case "k8s.io/kubernetes", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/mount-utils":
				v := m.Version
				if m.Replace != nil {
					v = m.Replace.Version
				}
				versions[m.Path] = v
			}
		}
	}
	return versions
})
