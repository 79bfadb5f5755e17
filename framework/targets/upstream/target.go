// Package upstream is the target "upstream": the catalogue against the real Kubernetes v1.37
// code, in-process. Admission runs the kube-apiserver's defaulting, field dropping and
// validation (Admit); the node side runs the kubelet's real volume plugins (emptyDir, hostPath,
// secret, configMap, downwardAPI, projected, flexVolume) with the real mounter and host utils
// under a temporary root (ObserveNode). It is the only package that imports k8s.io/kubernetes.
// Kubernetes' feature gate is process-global, so cases run one at a time.
package upstream

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	"github.com/volperm/volperm/framework"
)

// Name is the name the target registers under.
const Name = "upstream"

// KubernetesVersion is the k8s.io/kubernetes module the target is built against.
const KubernetesVersion = "v1.37.1"

func init() {
	framework.RegisterTarget(Name, "the real Kubernetes "+KubernetesVersion+" apiserver validation and kubelet volume plugins, in-process (needs root for node-side cases)", New)
}

// caseMu makes cases run one at a time: they flip the process-global feature gate.
var caseMu sync.Mutex

// Target runs cases on the upstream code.
type Target struct {
	workDir string
}

// New builds the upstream target; opts.Arg must be empty.
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg != "" {
		return nil, fmt.Errorf("target %q takes no argument (got %q)", Name, opts.Arg)
	}
	dir := opts.WorkDir
	if dir == "" {
		dir = os.TempDir()
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("work dir %q is not a directory: give an existing directory", dir)
	}
	return &Target{workDir: dir}, nil
}

// Info names the target and the Kubernetes modules it runs.
func (t *Target) Info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Version: KubernetesVersion, Details: map[string]string{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			switch m.Path {
			case "k8s.io/kubernetes", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/mount-utils":
				v := m.Version
				if m.Replace != nil {
					v = m.Replace.Version
				}
				info.Details[m.Path] = v
			}
		}
	}
	return info
}

// Supports tells whether upstream v1.37 has what c needs (no proposals: preservePermissions,
// the flexVolume allowlist, volperm's PreservePermissions gate) and, for cases that reach the
// node, whether this machine can run them (root, hugetlbfs).
func (t *Target) Supports(c *framework.Case) (bool, string) {
	if ok, why := apiServerSupport(c); !ok {
		return false, why
	}
	cc := copyCase(c)
	cc.Complete()
	if !reachesNode(cc) {
		return true, ""
	}
	return NodeSupports(cc)
}

// reachesNode reports whether c gets past the apiserver to a node.
func reachesNode(c *framework.Case) bool {
	if c.Pod == nil || c.AdmissionOnly || c.PersistentVolume != nil {
		return false
	}
	adm, _, err := Admit(c)
	return err == nil && adm.Allowed
}

// Observe runs c (docs/spec.md "The order of events"): Admit, then ObserveNode for an
// admitted pod.
func (t *Target) Observe(ctx context.Context, in *framework.Case) (*framework.Observation, error) {
	caseMu.Lock()
	defer caseMu.Unlock()
	c := copyCase(in)
	c.Complete()
	adm, pod, err := Admit(c)
	if err != nil {
		return nil, err
	}
	obs := &framework.Observation{APIVersion: framework.ObservationVersion, Case: c.Name, Source: Name, Admission: adm}
	if adm.Allowed && pod != nil && !c.AdmissionOnly && c.PersistentVolume == nil {
		if obs.Volumes, obs.Probes, err = ObserveNode(ctx, c, pod, t.workDir); err != nil {
			return nil, err
		}
	}
	obs.Normalize()
	return obs, nil
}

// Close releases nothing: every Observe removes its own root.
func (t *Target) Close() error { return nil }

func copyCase(c *framework.Case) *framework.Case {
	cc := *c
	if c.Pod != nil {
		cc.Pod = c.Pod.DeepCopy()
	}
	if c.OldPod != nil {
		cc.OldPod = c.OldPod.DeepCopy()
	}
	if c.PersistentVolume != nil {
		cc.PersistentVolume = c.PersistentVolume.DeepCopy()
	}
	return &cc
}
