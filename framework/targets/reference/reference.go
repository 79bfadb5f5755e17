// Package reference is the target "reference": volperm's own node implementation (nodeimpl/),
// in-process, on the real filesystem of this machine under a temporary root. Admission runs
// through nodeimpl/admission, set-up through nodeimpl/kubelet, and what it did is read back
// with stat and with probes run as real uids.
package reference

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/framework/targets/fixturedriver"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/admission"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// Name is the name the target registers under.
const Name = "reference"

func init() {
	framework.RegisterTarget(Name, "volperm's own apiserver model and node implementation, in-process, on this machine's filesystem (needs root for node-side cases)", New)
	framework.RegisterHalves(Name,
		func(framework.TargetOptions) (framework.APIServer, error) { return APIServer{}, nil },
		func(opts framework.TargetOptions) (framework.Node, error) { return NewNode(opts) })
}

// New builds the reference target: the reference apiserver with the reference kubelet.
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg != "" {
		return nil, fmt.Errorf("target %q takes no argument (got %q)", Name, opts.Arg)
	}
	node, err := NewNode(opts)
	if err != nil {
		return nil, err
	}
	return framework.NewTargetPair(Name, APIServer{}, node), nil
}

func info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Details: map[string]string{"kernel": hostfeature.KernelRelease()}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.Version = bi.Main.Version
	}
	return info
}

// APIServer is the reference apiserver: nodeimpl/admission.
type APIServer struct{}

// Info names the reference apiserver.
func (APIServer) Info() framework.TargetInfo { return info() }

// SupportsAdmission: the reference apiserver has every field and policy volperm knows.
func (APIServer) SupportsAdmission(*framework.Case) (bool, string) { return true, "" }

// Admit runs c's admission through nodeimpl/admission.
func (APIServer) Admit(c *framework.Case) (framework.Admitted, error) {
	req := admission.Request{
		Pod:                    c.Pod,
		OldPod:                 c.OldPod,
		PersistentVolume:       c.PersistentVolume,
		PreservePermissions:    c.PreservePermissions,
		OldPreservePermissions: c.OldPreservePermissions,
		Gates:                  gates.Set(c.Gates.APIServer),
	}
	if p := c.FlexVolumePolicy; p != nil {
		req.FlexPolicy = &admission.FlexVolumePolicy{AllowedVolumeTypes: p.AllowedVolumeTypes, AllowedDrivers: p.AllowedDrivers}
	}
	res := admission.Admit(req)
	return framework.Admitted{
		Admission: framework.Admission{
			Allowed:             res.Allowed,
			Errors:              res.Errors,
			Dropped:             res.Dropped,
			PreservePermissions: res.PreservePermissions,
		},
		Pod: res.Pod,
	}, nil
}

// Node is the reference kubelet: nodeimpl/kubelet on this machine under a temporary root.
type Node struct {
	roots *caseroot.Roots
}

// NewNode checks the work dir the node makes its case roots in.
func NewNode(opts framework.TargetOptions) (*Node, error) {
	roots, err := caseroot.New(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &Node{roots: roots}, nil
}

// Info names the reference kubelet.
func (n *Node) Info() framework.TargetInfo { return info() }

// SupportsNode: the reference kubelet runs every admitted pod; what this machine must have for it
// is HostNeeds.
func (n *Node) SupportsNode(*framework.Case, framework.Admitted) (bool, string) { return true, "" }

// Concurrency: every case runs under its own root with its own kubelet and probe children, and
// nothing in nodeimpl is shared, so cases run one per CPU (framework.ConcurrentNode).
func (n *Node) Concurrency() int { return runtime.NumCPU() }

// HostNeeds is kubelet.HostNeeds of the admitted pod (framework.NodeHostNeeds).
func (n *Node) HostNeeds(_ *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return kubelet.HostNeeds(a.Pod)
}

// SupportsNodeHere tells whether a node running on this machine as this process's user can
// set pod up (kubelet.HostNeeds), and if not, what the machine lacks and how to get it.
func SupportsNodeHere(pod *corev1.Pod) (bool, string) {
	if m := hostfeature.First(kubelet.HostNeeds(pod)); m != nil {
		return false, m.Error()
	}
	return true, ""
}

// ObserveNode sets the admitted pod up on nodeimpl/kubelet (docs/spec.md steps 3-8).
func (n *Node) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) (vols []framework.VolumeObservation, probes []framework.ProbeResult, err error) {
	root, err := n.roots.Make("volperm-ref-")
	if err != nil {
		return nil, nil, err
	}
	hostRoot, kubeletRoot := filepath.Join(root, "host"), filepath.Join(root, "kubelet")
	k, err := kubelet.New(kubelet.Config{RootDir: kubeletRoot, HostRoot: hostRoot, Gates: gates.Set(c.Gates.Kubelet)})
	if err != nil {
		return nil, nil, errors.Join(err, n.roots.Remove(root))
	}
	pod := &kubelet.Pod{Pod: a.Pod, PreservePermissions: a.Admission.PreservePermissions, Sources: c.Sources, Storage: fixturedriver.Storage(c.Storage)}
	defer func() {
		// Teardown runs on every path, including a cancelled ctx (SIGINT).
		if terr := errors.Join(k.TearDown(pod), n.roots.Remove(root)); terr != nil {
			vols, probes, err = nil, nil, errors.Join(err, terr)
		}
	}()

	if err := hostfix.Create(hostRoot, c.Host); err != nil {
		return nil, nil, err
	}
	results := map[string]kubelet.VolumeResult{}
	setUp := func() {
		for _, r := range k.SetUp(pod) {
			results[r.Name] = r
		}
	}
	setUp()
	kubeletGates := gates.Set(c.Gates.Kubelet)
	for i, s := range c.After {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		switch {
		case s.Chmod != nil:
			r, ok := results[s.Chmod.Volume]
			if !ok || r.Err != nil {
				return nil, nil, fmt.Errorf("after[%d].chmod: volume %q is not set up", i, s.Chmod.Volume)
			}
			// A container changing a mode: a plain chmod inside the volume.
			if err := os.Chmod(filepath.Join(r.Path, filepath.Clean("/"+s.Chmod.Path)), framework.FileMode(s.Chmod.Mode)); err != nil {
				return nil, nil, fmt.Errorf("after[%d].chmod: %w", i, err)
			}
		case s.SetGates != nil:
			kubeletGates = kubeletGates.Merge(s.SetGates.Kubelet)
			k.SetGates(kubeletGates)
		case s.RestartKubelet:
			setUp()
		}
	}

	roots := map[string]string{}
	for _, v := range a.Pod.Spec.Volumes {
		r := results[v.Name]
		vo := framework.VolumeObservation{Name: v.Name, Type: r.Type, Medium: r.Medium, SetUp: framework.SetUpOK}
		if r.Err != nil {
			vo.SetUp = r.Err.Error()
		} else {
			roots[v.Name] = r.Path
			snap := snapshot.Tree
			if v.HostPath != nil {
				snap = snapshot.Root
			}
			if vo.Paths, err = snap(r.Path); err != nil {
				return nil, nil, err
			}
		}
		vols = append(vols, vo)
	}
	if len(c.Probes) > 0 {
		if probes, err = probe.Run(ctx, c.Probes, roots); err != nil {
			return nil, nil, err
		}
	}
	return vols, probes, nil
}

// Close removes every case root a cancelled or failed run left, unmounting first.
func (n *Node) Close() error { return n.roots.RemoveAll() }

// PopulateStorage plays the volperm/fixture flexVolume driver for targets whose kubelet is not
// ours: it creates dir (0750, kubelet's prepareForMount) holding files.
func PopulateStorage(dir string, files []framework.File) error {
	return flexvolume.Populate(dir, fixturedriver.StorageOf(files))
}
