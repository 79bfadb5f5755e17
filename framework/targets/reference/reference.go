// Package reference is the target "reference": volperm's own node implementation (nodeimpl/),
// in-process, on the real filesystem of this machine under a temporary root. Admission runs
// through nodeimpl/admission, set-up through nodeimpl/kubelet, and what it did is read back
// with stat and with probes run as real uids.
package reference

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
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
	workDir string

	mu    sync.Mutex
	roots map[string]bool // case roots not yet removed, for Close
}

// New builds the reference target; opts.Arg must be empty.
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
	return &Target{workDir: dir, roots: map[string]bool{}}, nil
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
func (t *Target) Supports(c *framework.Case) (bool, string) {
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
	return admit(c).Allowed
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

func admit(c *framework.Case) admission.Result {
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
	c := copyCase(in)
	c.Complete()
	res := admit(c)
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
	if ok, why := t.Supports(c); !ok {
		return nil, fmt.Errorf("case %q cannot run here: %s", c.Name, why)
	}

	root, err := os.MkdirTemp(t.workDir, "volperm-ref-")
	if err != nil {
		return nil, fmt.Errorf("make case root: %w", err)
	}
	t.track(root, true)
	// Probes run as other uids: they must be able to reach the volumes.
	if err := os.Chmod(root, 0755); err != nil {
		return nil, errors.Join(fmt.Errorf("chmod case root: %w", err), t.removeRoot(root))
	}
	hostRoot, kubeletRoot := filepath.Join(root, "host"), filepath.Join(root, "kubelet")

	k, err := kubelet.New(kubelet.Config{RootDir: kubeletRoot, HostRoot: hostRoot, Gates: gates.Set(c.Gates.Kubelet)})
	if err != nil {
		return nil, errors.Join(err, t.removeRoot(root))
	}
	pod := &kubelet.Pod{Pod: res.Pod, PreservePermissions: res.PreservePermissions, Sources: c.Sources, Storage: storage(c.Storage)}
	defer func() {
		// Teardown runs on every path, including a cancelled ctx (SIGINT).
		err = errors.Join(err, k.TearDown(pod), t.removeRoot(root))
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
			if err := os.Chmod(filepath.Join(r.Path, filepath.Clean("/"+s.Chmod.Path)), fileMode(s.Chmod.Mode)); err != nil {
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
func (t *Target) Close() error {
	t.mu.Lock()
	roots := make([]string, 0, len(t.roots))
	for r := range t.roots {
		roots = append(roots, r)
	}
	t.mu.Unlock()
	var errs []error
	for _, r := range roots {
		errs = append(errs, t.removeRoot(r))
	}
	return errors.Join(errs...)
}

func (t *Target) track(root string, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if on {
		t.roots[root] = true
	} else {
		delete(t.roots, root)
	}
}

// removeRoot unmounts whatever is still mounted below root (deepest first) and removes it. It
// never removes across a mount point.
func (t *Target) removeRoot(root string) error {
	mounts, err := mountsBelow(root)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if err := syscall.Unmount(m, 0); err != nil {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount leftover %s: %w", m, err)
			}
		}
	}
	if err := os.RemoveAll(root); err != nil {
		return fmt.Errorf("remove case root: %w", err)
	}
	t.track(root, false)
	return nil
}

// mountsBelow lists mount points under dir from /proc/self/mountinfo, deepest first.
func mountsBelow(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
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

// fileMode converts Unix permission bits (with 07000) to an os.FileMode.
func fileMode(m uint32) os.FileMode {
	fm := os.FileMode(m & 0777)
	if m&04000 != 0 {
		fm |= os.ModeSetuid
	}
	if m&02000 != 0 {
		fm |= os.ModeSetgid
	}
	if m&01000 != 0 {
		fm |= os.ModeSticky
	}
	return fm
}

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
