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
	"runtime/debug"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/probe"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/nodeimpl/admission"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/kubelet"
)

// Name is the name the target registers under.
const Name = "reference"

func init() {
	framework.RegisterTarget(Name, "volperm's own node implementation, in-process, on this machine's filesystem (needs root for node-side cases)", New)
}

// Target runs cases on the reference node implementation.
type Target struct {
	roots *caseroot.Roots
}

// New builds the reference target; opts.Arg must be empty.
func New(opts framework.TargetOptions) (framework.Target, error) {
	if opts.Arg != "" {
		return nil, fmt.Errorf("target %q takes no argument (got %q)", Name, opts.Arg)
	}
	roots, err := caseroot.New(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &Target{roots: roots}, nil
}

// Info names the target and its versions.
func (t *Target) Info() framework.TargetInfo {
	info := framework.TargetInfo{Name: Name, Details: map[string]string{"kernel": kernelRelease()}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.Version = bi.Main.Version
	}
	return info
}

// Supports tells whether c can run here: node-side cases need root (mounts, chown, mknod,
// probes as other uids) and HugePages cases need hugetlbfs.
func (t *Target) Supports(c *framework.Case) (bool, string) { return SupportsHere(c) }

// SupportsHere is Supports for any target whose node runs on this machine as this process's user.
func SupportsHere(c *framework.Case) (bool, string) {
	if !needsNode(c) {
		return true, ""
	}
	if os.Geteuid() != 0 {
		return false, "needs root: the reference node mounts tmpfs/hugetlbfs, chowns, creates devices and runs probes as other uids"
	}
	if usesHugePages(c.Pod) && !kernelHas("hugetlbfs") {
		return false, "needs hugetlbfs: the kernel does not list it in /proc/filesystems"
	}
	return true, ""
}

// needsNode reports whether c reaches the node: admitted by the reference apiserver and not
// admission-only.
func needsNode(c *framework.Case) bool {
	if c.Pod == nil || c.AdmissionOnly || c.PersistentVolume != nil {
		return false
	}
	return Admit(c).Allowed
}

func usesHugePages(p *corev1.Pod) bool {
	if p == nil {
		return false
	}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil && strings.HasPrefix(string(v.EmptyDir.Medium), string(corev1.StorageMediumHugePages)) {
			return true
		}
	}
	return false
}

// Admit runs c's admission through the reference apiserver (nodeimpl/admission). Other targets
// that have no apiserver of their own use it too.
func Admit(c *framework.Case) admission.Result {
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
	return admission.Admit(req)
}

// Observe runs c (docs/spec.md "The order of events") and tears everything down.
func (t *Target) Observe(ctx context.Context, in *framework.Case) (obs *framework.Observation, err error) {
	c := in.DeepCopy()
	c.Complete()
	res := Admit(c)
	obs = &framework.Observation{
		APIVersion: framework.ObservationVersion,
		Case:       c.Name,
		Source:     Name,
		Admission: framework.Admission{
			Allowed:             res.Allowed,
			Errors:              res.Errors,
			Dropped:             res.Dropped,
			PreservePermissions: res.PreservePermissions,
		},
	}
	if !res.Allowed || c.AdmissionOnly || c.Pod == nil || c.PersistentVolume != nil {
		obs.Normalize()
		return obs, nil
	}
	if ok, why := SupportsHere(c); !ok {
		return nil, fmt.Errorf("case %q cannot run here: %s", c.Name, why)
	}

	root, err := t.roots.Make("volperm-ref-")
	if err != nil {
		return nil, err
	}
	hostRoot, kubeletRoot := filepath.Join(root, "host"), filepath.Join(root, "kubelet")

	k, err := kubelet.New(kubelet.Config{RootDir: kubeletRoot, HostRoot: hostRoot, Gates: gates.Set(c.Gates.Kubelet)})
	if err != nil {
		return nil, errors.Join(err, t.roots.Remove(root))
	}
	pod := &kubelet.Pod{Pod: res.Pod, PreservePermissions: res.PreservePermissions, Sources: c.Sources, Storage: storage(c.Storage)}
	defer func() {
		// Teardown runs on every path, including a cancelled ctx (SIGINT).
		err = errors.Join(err, k.TearDown(pod), t.roots.Remove(root))
		if err != nil {
			obs = nil
		}
	}()

	if err := hostfix.Create(hostRoot, c.Host); err != nil {
		return nil, err
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
			return nil, err
		}
		switch {
		case s.Chmod != nil:
			r, ok := results[s.Chmod.Volume]
			if !ok || r.Err != nil {
				return nil, fmt.Errorf("after[%d].chmod: volume %q is not set up", i, s.Chmod.Volume)
			}
			// A container changing a mode: a plain chmod inside the volume.
			if err := os.Chmod(filepath.Join(r.Path, filepath.Clean("/"+s.Chmod.Path)), framework.FileMode(s.Chmod.Mode)); err != nil {
				return nil, fmt.Errorf("after[%d].chmod: %w", i, err)
			}
		case s.SetGates != nil:
			kubeletGates = kubeletGates.Merge(s.SetGates.Kubelet)
			k.SetGates(kubeletGates)
		case s.RestartKubelet:
			setUp()
		}
	}

	roots := map[string]string{}
	for _, v := range res.Pod.Spec.Volumes {
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
				return nil, err
			}
		}
		obs.Volumes = append(obs.Volumes, vo)
	}
	if len(c.Probes) > 0 {
		if obs.Probes, err = probe.Run(ctx, c.Probes, roots); err != nil {
			return nil, err
		}
	}
	obs.Normalize()
	return obs, nil
}

// Close removes every case root a cancelled or failed run left, unmounting first.
func (t *Target) Close() error { return t.roots.RemoveAll() }

// VolumeType names v's source as VolumeObservation.Type does.
func VolumeType(v corev1.Volume) string {
	switch {
	case v.EmptyDir != nil:
		return "emptyDir"
	case v.HostPath != nil:
		return "hostPath"
	case v.Secret != nil:
		return "secret"
	case v.ConfigMap != nil:
		return "configMap"
	case v.DownwardAPI != nil:
		return "downwardAPI"
	case v.Projected != nil:
		return "projected"
	case v.FlexVolume != nil:
		return "flexVolume"
	}
	return "unsupported"
}

// PopulateStorage plays the volperm/fixture flexVolume driver for targets whose kubelet is not
// ours: it creates dir (0750, kubelet's prepareForMount) holding files.
func PopulateStorage(dir string, files []framework.File) error {
	return flexvolume.Populate(dir, storage(map[string][]framework.File{"": files})[""])
}

func storage(in map[string][]framework.File) map[string][]flexvolume.StorageFile {
	out := map[string][]flexvolume.StorageFile{}
	for vol, files := range in {
		for _, f := range files {
			out[vol] = append(out[vol], flexvolume.StorageFile{Path: f.Path, Dir: f.Dir, Symlink: f.Symlink, Mode: f.Mode, UID: f.UID, GID: f.GID})
		}
	}
	return out
}

func kernelHas(fs string) bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == fs {
			return true
		}
	}
	return false
}

func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
