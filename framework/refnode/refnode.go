// Package refnode is volperm's own implementation (nodeimpl/) behind the framework's interfaces,
// for every target that uses it: APIServer is nodeimpl/admission as an apiserver half, and Pod
// is one admitted pod on nodeimpl/kubelet as a lifecycle.Pod. The reference target is both on
// this machine; the container target sets pods up with Pod and observes them from containers;
// the exec target admits with APIServer when it has no agent of its own for that half. No
// target imports another: they share this package.
package refnode

import (
	"context"
	"errors"
	"maps"
	"path/filepath"

	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/fixturedriver"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/admission"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
	"github.com/volperm/volperm/nodeimpl/selinux"
	"github.com/volperm/volperm/nodeimpl/userns"
)

// Name is the name the reference implementation reports (and the reference target registers).
const Name = "reference"

// Info names the reference implementation: its version and this machine's kernel.
func Info() framework.TargetInfo {
	version, kernel := buildAndKernel()
	return framework.TargetInfo{Name: Name, Version: version, Details: map[string]string{"kernel": kernel}}
}

// buildAndKernel is read once: the pair asks for Info with every case (parsing the build info
// each time was 8% of the reference catalogue's CPU).
var buildAndKernel = sync.OnceValues(func() (version, kernel string) {
	v := report.CurrentVersions()
	return v.Volperm, v.Kernel
})

// APIServer is the reference apiserver: nodeimpl/admission.
type APIServer struct{}

// Info names the reference apiserver.
func (APIServer) Info() framework.TargetInfo { return Info() }

// RunsRelease: the reference apiserver simulates every supported release (docs/spec.md
// "Releases").
func (APIServer) RunsRelease(string) bool { return true }

// SupportsAdmission: the reference apiserver has every field and policy volperm knows.
func (APIServer) SupportsAdmission(*framework.Case) (bool, string) { return true, "" }

// Admit runs c's admission through nodeimpl/admission. It never fails.
func (APIServer) Admit(_ context.Context, c *framework.Case) (framework.Admitted, error) {
	req := admission.Request{
		Pod:                    c.Pod,
		OldPod:                 c.OldPod,
		PersistentVolume:       c.PersistentVolume,
		PreservePermissions:    c.PreservePermissions,
		OldPreservePermissions: c.OldPreservePermissions,
		Gates:                  gates.Set(c.Gates.APIServer),
		Release:                c.Releases.Of(true),
		Strict:                 c.FieldValidation == framework.FieldValidationStrict,
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
			Warnings:            res.Warnings,
		},
		Pod: res.Pod,
	}, nil
}

// HostNeeds is what a node on this machine, as this process's user, needs to set pod up
// (kubelet.HostNeeds): the reference kubelet's needs, and any node's that mounts and chowns here.
func HostNeeds(pod *corev1.Pod) []hostfeature.Feature { return kubelet.HostNeeds(pod) }

// SupportsHere tells whether a node on this machine can set pod up (HostNeeds), and if not,
// what the machine lacks and how to get it.
func SupportsHere(pod *corev1.Pod) (bool, string) {
	if m := hostfeature.First(HostNeeds(pod)); m != nil {
		return false, m.Error()
	}
	return true, ""
}

// PopulateStorage plays the volperm/fixture flexVolume driver for targets whose kubelet is not
// ours: it creates dir (0750, kubelet's prepareForMount) holding files.
func PopulateStorage(dir string, files []framework.File) error {
	return flexvolume.Populate(dir, fixturedriver.StorageOf(files))
}

// Pod is one admitted pod on nodeimpl/kubelet under a case root: the kubelet's state in
// root/kubelet, c's host fixtures in root/host. The caller removes root after TearDown.
type Pod struct {
	k   *kubelet.Kubelet
	pod *kubelet.Pod
	// last is the latest SetUp's answer, for the volumes a sync does not touch.
	last lifecycle.Volumes
}

// NewPod starts a reference kubelet with c's kubelet gates under root and creates c's host
// fixtures for the pod a admitted.
func NewPod(root string, c *framework.Case, a framework.Admitted) (*Pod, error) {
	hostRoot := filepath.Join(root, "host")
	k, err := kubelet.New(kubelet.Config{RootDir: filepath.Join(root, "kubelet"), HostRoot: hostRoot, Gates: gates.Set(c.Gates.Kubelet), Release: c.Releases.Of(false),
		NoUserNamespaces: c.Lacks(framework.RuntimeUserNamespaces), NoSupplementalGroupsPolicy: c.Lacks(framework.RuntimeSupplementalGroupsPolicy),
		NoMountOptions: c.Lacks(framework.RuntimeMountOptions)})
	if err != nil {
		return nil, err
	}
	if err := hostfix.Create(hostRoot, c.Host); err != nil {
		return nil, err
	}
	return &Pod{k: k, pod: &kubelet.Pod{Pod: a.Pod, PreservePermissions: a.Admission.PreservePermissions, Sources: c.Sources, Storage: fixturedriver.Storage(c.Storage),
		SELinux: SELinuxNode(c.SELinux)}}, nil
}

// SetUp is the kubelet's admission of the pod, then its SetUp of every volume (lifecycle.Pod).
func (p *Pod) SetUp(context.Context) (lifecycle.Volumes, error) {
	var rej *kubelet.Rejection
	if err := p.k.Admit(p.pod); errors.As(err, &rej) {
		return nil, &lifecycle.Rejected{Reason: rej.Reason, Message: rej.Message}
	}
	return p.record(lifecycle.Volumes{}, p.k.SetUp(p.pod)), nil
}

// ContainerSecurity is the user part of the CRI config of the pod's first container
// (lifecycle.Containered).
func (p *Pod) ContainerSecurity(context.Context) (framework.ContainerSecurity, error) {
	s := p.k.ContainerSecurity(p.pod, 0)
	return framework.ContainerSecurity{RunAsUser: s.RunAsUser, RunAsGroup: s.RunAsGroup, SupplementalGroups: s.SupplementalGroups, Strict: s.Strict}, nil
}

// record puts results over out, keeps out as the latest answer and returns it.
func (p *Pod) record(out lifecycle.Volumes, results []kubelet.VolumeResult) lifecycle.Volumes {
	for _, r := range results {
		v := lifecycle.Volume{Path: r.Path, SELinuxMount: r.SELinuxMount}
		if r.Err != nil {
			v.Err = r.Err.Error()
		}
		out[r.Name] = v
	}
	p.last = out
	return out
}

// SELinuxNode is s for the reference kubelet (nodeimpl/selinux keeps its own names); nil for a
// node with SELinux off.
func SELinuxNode(s *framework.SELinux) *selinux.Node {
	if s == nil {
		return nil
	}
	return &selinux.Node{Claims: s.Claims, CSIDrivers: s.CSIDrivers, Running: s.Running}
}

// SetGates puts the kubelet gates in force for the next SetUp (lifecycle.Pod).
func (p *Pod) SetGates(_ context.Context, g map[string]bool) error {
	p.k.SetGates(gates.Set(g))
	return nil
}

// UpdateSources is the kubelet's sync after the pod's secrets and configMaps changed to
// sources: the volumes that need a remount are set up again, the others keep their last result
// (lifecycle.SourceUpdater).
func (p *Pod) UpdateSources(ctx context.Context, sources map[string]map[string]string) (lifecycle.Volumes, error) {
	p.pod.Sources = sources
	return p.record(maps.Clone(p.last), p.k.Sync(p.pod)), nil
}

// Restart is a new kubelet process on the same state: its SetUp of every volume again; what the
// first SetUp left on disk is all it knows (lifecycle.Pod).
func (p *Pod) Restart(ctx context.Context) (lifecycle.Volumes, error) { return p.SetUp(ctx) }

// SetKubeletRelease is a kubelet of release, with gates, on the same state: its SetUp of every
// volume again, the pod decoded as release knows it (lifecycle.ReleaseChanger).
func (p *Pod) SetKubeletRelease(ctx context.Context, release string, g map[string]bool) (lifecycle.Volumes, error) {
	p.k.SetRelease(release)
	p.k.SetGates(gates.Set(g))
	return p.SetUp(ctx)
}

// UserNamespace is the pod's user namespace (lifecycle.UserNamespaced).
func (p *Pod) UserNamespace(context.Context) (framework.IDMap, error) {
	m, err := p.k.UserNamespace(p.pod)
	var se *kubelet.SandboxError
	if errors.As(err, &se) {
		return framework.IDMap{}, &lifecycle.SandboxError{Msg: se.Msg}
	}
	return framework.IDMap{HostID: m.HostID, Length: m.Length}, err
}

// RuntimeDir is where the runtime mounts the pod's volumes for its containers, in the pod's
// directory, which TearDown unmounts and removes (lifecycle.Runtime).
func (p *Pod) RuntimeDir() string { return p.k.RuntimeDir(p.pod) }

// IDMappedMount is the runtime's idmapped bind mount of a volume (lifecycle.UserNamespaced).
func (p *Pod) IDMappedMount(src, dst string, m framework.IDMap) error {
	return userns.Mount(src, dst, userns.Mapping{HostID: m.HostID, Length: m.Length})
}

// TearDown unmounts and removes every volume (lifecycle.Pod).
func (p *Pod) TearDown(context.Context) error { return p.k.TearDown(p.pod) }
