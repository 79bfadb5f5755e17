// Package lifecycle is the spec's node lifecycle of one admitted pod, written once (docs/spec.md
// "Order of events", steps 3-8): set every volume up, apply the case's steps in order (chmod,
// setGates, restartKubelet), snapshot every volume, run the probes, tear down. A target supplies
// a Pod (what its node does to one pod) and the driver does the rest in the spec's order,
// checking cancellation between steps and tearing down on every path. Observe is the whole
// lifecycle (reference, exec, upstream), its volumes seen through an Inside (inside.go: this
// machine, Here, or the Pod's own, Seen); a target that snapshots and probes many pods at once
// elsewhere (container: docker exec; cluster: pod exec, each an Inside) runs the part on the
// node with Steps and builds its Observation with Volumes.
package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/probe"
	probeimage "github.com/volperm/volperm/framework/probe/image"
	"github.com/volperm/volperm/framework/probe/incontainer"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// Volume is one volume after a SetUp, as the node reports it.
type Volume struct {
	// Path is where the node set the volume up, on this machine.
	Path string
	// Err is the SetUp's error text; "" when the volume is set up.
	Err string
	// SELinuxMount is the label a node with SELinux on mounts the volume with (-o context); a
	// persistentVolumeClaim volume has only this, no Path (docs/spec.md "SELinux mount
	// decisions": volperm mounts no PersistentVolume).
	SELinuxMount string
}

// Volumes is a node's answer to a SetUp: one Volume per volume name of the pod.
type Volumes map[string]Volume

// Pod is one admitted pod on a target's node: the five things a node does to it.
type Pod interface {
	// SetUp is the kubelet's first SetUp of every volume (step 4).
	SetUp(ctx context.Context) (Volumes, error)
	// SetGates puts gates in force on the kubelet from now on: every kubelet gate of the case,
	// merged with those of each setGates step so far (step 5, setGates).
	SetGates(ctx context.Context, gates map[string]bool) error
	// Restart restarts the kubelet, which sets every volume up again (step 5, restartKubelet).
	Restart(ctx context.Context) (Volumes, error)
	// TearDown removes everything the node made for the pod (step 8). It runs once, on every
	// path, with a context that is never cancelled; its error fails an observation that had
	// not failed already.
	TearDown(ctx context.Context) error
}

// SourceUpdater is a Pod whose node can take new data for the pod's secrets and configMaps
// (step 5, updateSources): its kubelet's sync sets up again the volumes that need a remount
// (secret, configMap, downwardAPI, projected) with sources, the whole new data of every
// object. A Pod without it cannot run such a case (its target says so in SupportsNode).
type SourceUpdater interface {
	UpdateSources(ctx context.Context, sources map[string]map[string]string) (Volumes, error)
}

// ReleaseChanger is a Pod whose node can replace its kubelet by one of another release (step 5,
// kubeletRelease): the kubelet of release restarts with gates, the kubelet gates in force that
// release has, and sets every volume up again. A Pod without it cannot run such a case (its
// target says so in SupportsNode).
type ReleaseChanger interface {
	SetKubeletRelease(ctx context.Context, release string, gates map[string]bool) (Volumes, error)
}

// Chmoder is a Pod whose volumes are not on this machine (a cluster's node): it applies a chmod
// step itself, as root in the pod, to path (a volume's Path joined with the step's path).
type Chmoder interface {
	Chmod(ctx context.Context, path string, mode uint32) error
}

// Seen is a Pod whose volumes are seen from elsewhere than this process (a node reached
// through another process or machine): Observe snapshots them and runs the probes through its
// Inside, at the paths its SetUp gave, which are the paths there (docs/architecture.md "Recipe:
// add a target", a node elsewhere). A Pod without it is seen from this machine (Here).
type Seen interface {
	Inside() Inside
}

// Prober is a Pod that must prepare this machine before the probes of Observe run (for
// example, let every uid reach volume roots under directories its kubelet made 0750).
type Prober interface {
	BeforeProbes(roots map[string]string) error
}

// SandboxError is a UserNamespaced Pod's UserNamespace failing as its kubelet fails to create
// the pod's sandbox (docs/spec.md [userns.runtime]): the volumes stay set up, no container
// runs; Msg is the Observation's sandboxError.
type SandboxError struct{ Msg string }

func (e *SandboxError) Error() string { return "Failed to create pod sandbox: " + e.Msg }

// Rejected is a Pod's SetUp failing as its kubelet refuses to admit the pod (docs/spec.md
// [groups.admit]): nothing is set up; the Observation's rejected is "Reason: Message".
type Rejected struct{ Reason, Message string }

func (e *Rejected) Error() string { return e.Reason + ": " + e.Message }

// Containered is a Pod whose node gives the user part of its first container's CRI config
// (docs/spec.md [groups.policy]); the harness, playing the runtime, makes the process of it
// that the case's container probes run as. A Pod without it cannot run such a case (its target
// says so in SupportsNode).
type Containered interface {
	ContainerSecurity(ctx context.Context) (framework.ContainerSecurity, error)
}

// UserNamespaced is a Pod whose node runs a pod with hostUsers: false in a user namespace of
// its own (docs/spec.md "User namespaces"): the kubelet's range for it, and the runtime's
// idmapped bind mount of a volume at dst, under the pod's RuntimeDir. A Pod without it cannot
// run such a case (its target says so in SupportsNode).
type UserNamespaced interface {
	Runtime
	UserNamespace(ctx context.Context) (framework.IDMap, error)
	IDMappedMount(src, dst string, ns framework.IDMap) error
}

// Runtime is a Pod on whose node the harness plays the container runtime's part: it mounts
// the pod's volumes as a container of the pod sees them (idmapped in a user namespace,
// read-only where the container's mount is: docs/spec.md [probes.read-only]) below
// RuntimeDir, which the Pod's TearDown empties of mounts and removes.
type Runtime interface {
	RuntimeDir() string
}

// Steps is docs/spec.md steps 4-5 on p: the first SetUp, then c's steps in order, stopping
// between steps when ctx is cancelled. It returns the volumes of the last SetUp. It does not
// tear down.
func Steps(ctx context.Context, c *framework.Case, p Pod) (Volumes, error) {
	return steps(ctx, c, p, func() error { return nil })
}

// steps is Steps calling started after the first SetUp and after every kubelet restart
// (restartKubelet, kubeletRelease): each time a kubelet process starts with the pod.
func steps(ctx context.Context, c *framework.Case, p Pod, started func() error) (Volumes, error) {
	vols, err := p.SetUp(ctx)
	if err != nil {
		return nil, err
	}
	if err := started(); err != nil {
		return nil, err
	}
	kubelet := maps.Clone(c.Gates.Kubelet)
	if kubelet == nil {
		kubelet = map[string]bool{}
	}
	sources := c.Sources
	for i, s := range c.After {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch s.Kind() {
		case framework.StepChmod:
			v, ok := vols[s.Chmod.Volume]
			if !ok || v.Err != "" {
				return nil, fmt.Errorf("after[%d].chmod: volume %q is not set up", i, s.Chmod.Volume)
			}
			// A container changing a mode inside the volume: a plain chmod(2) of the spec's
			// mode bits, as root.
			path, mode := filepath.Join(v.Path, filepath.Clean("/"+s.Chmod.Path)), s.Chmod.Mode&07777
			var err error
			if ch, ok := p.(Chmoder); ok {
				err = ch.Chmod(ctx, path, mode)
			} else {
				err = syscall.Chmod(path, mode)
			}
			if err != nil {
				return nil, fmt.Errorf("after[%d].chmod: %w", i, err)
			}
		case framework.StepSetGates:
			// docs/spec.md: apiserver gates no longer matter for a pod that exists.
			if len(s.SetGates.Kubelet) == 0 {
				continue
			}
			maps.Copy(kubelet, s.SetGates.Kubelet)
			if err := p.SetGates(ctx, maps.Clone(kubelet)); err != nil {
				return nil, fmt.Errorf("after[%d].setGates: %w", i, err)
			}
		case framework.StepRestartKubelet:
			if vols, err = p.Restart(ctx); err != nil {
				return nil, fmt.Errorf("after[%d].restartKubelet: %w", i, err)
			}
			if err := started(); err != nil {
				return nil, fmt.Errorf("after[%d].restartKubelet: %w", i, err)
			}
		case framework.StepKubeletRelease:
			rc, ok := p.(ReleaseChanger)
			if !ok {
				return nil, fmt.Errorf("after[%d].kubeletRelease: this target's node cannot replace its kubelet", i)
			}
			// [steps.kubelet-release]: the gates that release lacks leave the configuration.
			kubelet = framework.GatesOfRelease(kubelet, s.KubeletRelease)
			if vols, err = rc.SetKubeletRelease(ctx, s.KubeletRelease, maps.Clone(kubelet)); err != nil {
				return nil, fmt.Errorf("after[%d].kubeletRelease: %w", i, err)
			}
			if err := started(); err != nil {
				return nil, fmt.Errorf("after[%d].kubeletRelease: %w", i, err)
			}
		case framework.StepUpdateSources:
			u, ok := p.(SourceUpdater)
			if !ok {
				return nil, fmt.Errorf("after[%d].updateSources: this target's node cannot update sources", i)
			}
			sources = framework.MergeSources(sources, s.UpdateSources)
			if vols, err = u.UpdateSources(ctx, sources); err != nil {
				return nil, fmt.Errorf("after[%d].updateSources: %w", i, err)
			}
		}
	}
	return vols, nil
}

// Observe is docs/spec.md steps 4-8 on this machine: Steps, a snapshot of every volume the last
// SetUp set up, the pod's user namespace, c's probes on the volumes' paths, and p's TearDown on
// every path.
func Observe(ctx context.Context, c *framework.Case, a framework.Admitted, p Pod) framework.NodeResult {
	r := observe(ctx, c, a, p)
	// The first error is the verdict, one line: a teardown after an earlier failure is best
	// effort (an agent that failed its setup often fails its teardown the same way).
	if terr := p.TearDown(context.WithoutCancel(ctx)); terr != nil && r.Err == nil {
		return framework.NodeResult{Err: terr}
	}
	return r
}

func observe(ctx context.Context, c *framework.Case, a framework.Admitted, p Pod) framework.NodeResult {
	failed := func(err error) framework.NodeResult { return framework.NodeResult{Err: err} }
	var ranges []framework.IDMap
	var sandbox *SandboxError
	set, err := steps(ctx, c, p, func() error {
		if !framework.InUserNamespace(a.Pod) {
			return nil
		}
		un, ok := p.(UserNamespaced)
		if !ok {
			return fmt.Errorf("pod %s has hostUsers: false, and this target's node cannot run it in a user namespace", a.Pod.Name)
		}
		ns, err := un.UserNamespace(ctx)
		if errors.As(err, &sandbox) {
			return nil
		}
		ranges = append(ranges, ns)
		return err
	})
	var rejected *Rejected
	if errors.As(err, &rejected) {
		return framework.NodeResult{Rejected: rejected.Error()}
	}
	if err != nil {
		return failed(err)
	}
	if err := imageVolumes(a.Pod, p, set); err != nil {
		return failed(err)
	}
	vols := Observations(a.Pod, set)
	// docs/spec.md [mounts.recursive-read-only]: the kubelet's container status of each
	// readOnly mount (the harness plays the kubelet's makeMounts and the runtime).
	rro := !c.Lacks(framework.RuntimeRecursiveReadOnlyMounts)
	for i := range vols {
		vols[i].RecursiveReadOnly = framework.RecursiveReadOnlyStatus(a.Pod, vols[i].Name, rro)
	}
	// docs/spec.md step 6, seen where the pod's containers are (Here, or the Pod's Inside):
	// every volume set up, where it was.
	var in Inside = Here{}
	if s, ok := p.(Seen); ok {
		in = s.Inside()
	}
	roots := map[string]string{}
	var snap incontainer.Request
	var snapped []int
	for i, v := range a.Pod.Spec.Volumes {
		if vols[i].SetUp != framework.SetUpOK || v.PersistentVolumeClaim != nil {
			continue // a PersistentVolume: its node's SELinux decision only
		}
		path := set[v.Name].Path
		roots[v.Name] = path
		snap.Volumes = append(snap.Volumes, incontainer.Volume{Name: v.Name, Path: path, Root: v.HostPath != nil})
		snapped = append(snapped, i)
	}
	if len(snapped) > 0 {
		seen, err := in.Request(ctx, snap)
		if err != nil {
			return failed(fmt.Errorf("reported set up, but: %w", err))
		}
		for k, i := range snapped {
			vols[i].Paths = seen.Volumes[k].Paths
		}
	}
	r := framework.NodeResult{Volumes: vols}
	if sandbox != nil {
		r.SandboxError = sandbox.Msg
		return r
	}
	disk := maps.Clone(roots)
	var ns *framework.IDMap
	if framework.InUserNamespace(a.Pod) {
		if ns, err = podView(ctx, a.Pod, p, vols, roots); err != nil {
			return failed(err)
		}
		r.UserNamespace = framework.UserNamespaceOf(ranges)
	}
	if e := framework.ContainerConfigError(a.Pod, rro); e != "" {
		r.ContainerError = e // no container: no probe
		return r
	}
	if len(c.Probes) == 0 {
		return r
	}
	if err := probedSetUp(c.Probes, vols); err != nil {
		return failed(err)
	}
	probes := c.Probes
	if framework.HasContainerProbes(c) {
		// docs/spec.md [groups.policy]: the node's CRI config, the runtime's process of it.
		cp, ok := p.(Containered)
		if !ok {
			return failed(fmt.Errorf("case %s probes as its container, and this target's node does not give its container's config", c.Name))
		}
		sec, err := cp.ContainerSecurity(ctx)
		if err != nil {
			return failed(err)
		}
		u := framework.RuntimeUser(sec, !c.Lacks(framework.RuntimeSupplementalGroupsPolicy))
		probes = framework.WithContainerUser(probes, u)
		if !c.Lacks(framework.RuntimeSupplementalGroupsPolicy) {
			r.ContainerUser = framework.ContainerUserOf(u)
		}
	}
	if err := readOnlyMounts(a.Pod, p, vols, roots, ns != nil, rro, probes); err != nil {
		return failed(err)
	}
	if pr, ok := p.(Prober); ok {
		if err := pr.BeforeProbes(roots); err != nil {
			return failed(err)
		}
	}
	if ns != nil {
		// In the pod's user namespace on this machine: through the idmapped mounts.
		r.Probes, err = probe.RunIn(ctx, probes, roots, *ns)
	} else {
		r.Probes, err = probeFrom(ctx, in, probes, roots)
	}
	if err != nil {
		return failed(err)
	}
	if ns != nil {
		if err := made(probes, r.Probes, disk, roots, *ns); err != nil {
			return failed(err)
		}
	}
	return r
}

// probedSetUp is the verdict on a probe of a volume whose set-up failed: it names the node's
// own text, which the failure line and the summary print (issue 51: "An agent's error text is
// printed with the case's failure"), quoted so that it stays one line.
func probedSetUp(probes []framework.Probe, vols []framework.VolumeObservation) error {
	for _, p := range probes {
		for _, v := range vols {
			if v.Name == p.Volume && v.SetUp != framework.SetUpOK {
				return fmt.Errorf("probe %q: volume %q was not set up: its set-up failed with %q", p.Name, p.Volume, v.SetUp)
			}
		}
	}
	return nil
}

// probeFrom is docs/spec.md step 7 seen through in: each probe as its user at its volume's root.
func probeFrom(ctx context.Context, in Inside, probes []framework.Probe, roots map[string]string) ([]framework.ProbeResult, error) {
	steps, err := ProbeSteps(probes, roots)
	if err != nil {
		return nil, err
	}
	seen, err := in.Request(ctx, incontainer.Request{Probes: steps, EachAsItsUser: true})
	if err != nil {
		return nil, err
	}
	return seen.Probes, nil
}

// made gives each allowed probe that made or changed an entry (framework.MakesEntry) what is at
// its path now, all probes done: stat on the node's disk (disk: each volume where it was set
// up), and the owner through the pod's idmapped mount (mounted) as the pod sees it where it
// differs (framework.ProbeResult.Made). A path a later probe removed has nothing.
func made(probes []framework.Probe, results []framework.ProbeResult, disk, mounted map[string]string, ns framework.IDMap) error {
	for i, p := range probes {
		if !results[i].Allowed || !framework.MakesEntry(p.Op) {
			continue
		}
		onDisk, err := snapshot.Root(filepath.Join(disk[p.Volume], p.Path))
		if err != nil {
			return fmt.Errorf("probe %q: what it left on disk: %w", p.Name, err)
		}
		if onDisk[0].Type == snapshot.Absent {
			continue
		}
		inPod, err := snapshot.Root(filepath.Join(mounted[p.Volume], p.Path))
		if err != nil {
			return fmt.Errorf("probe %q: what it left, as the pod sees it: %w", p.Name, err)
		}
		podOwners(onDisk, inPod, ns)
		e := onDisk[0]
		e.Path = p.Path
		results[i].Made = &e
	}
	return nil
}

// podView is the runtime's part for a pod in a user namespace (docs/spec.md "User namespaces"):
// each volume set up is mounted idmapped with the pod's range, as a container of the pod mounts
// it; vols get the pod's view of each entry's owner where it differs from the disk's
// (docs/observation.md "Two views"), and roots become the idmapped mounts the probes use.
func podView(ctx context.Context, pod *corev1.Pod, p Pod, vols []framework.VolumeObservation, roots map[string]string) (*framework.IDMap, error) {
	un, ok := p.(UserNamespaced)
	if !ok {
		return nil, fmt.Errorf("pod %s has hostUsers: false, and this target's node cannot run it in a user namespace", pod.Name)
	}
	ns, err := un.UserNamespace(ctx)
	if err != nil {
		return nil, err
	}
	dir := un.RuntimeDir()
	for i, v := range pod.Spec.Volumes {
		src, ok := roots[v.Name]
		if !ok {
			continue
		}
		if len(vols[i].Paths) > 0 && vols[i].Paths[0].Type == snapshot.Absent {
			continue // nothing to mount: the pod sees nothing there either
		}
		dst := filepath.Join(dir, v.Name)
		if err := un.IDMappedMount(src, dst, ns); err != nil {
			return nil, fmt.Errorf("volume %q in the pod's user namespace: %w", v.Name, err)
		}
		roots[v.Name] = dst
		inside, err := Snapshot(v, dst)
		if err != nil {
			return nil, fmt.Errorf("volume %q in the pod's user namespace: %w", v.Name, err)
		}
		podOwners(vols[i].Paths, inside, ns)
	}
	return &ns, nil
}

// readOnlyMounts is the runtime's read-only mount of each volume a container of pod mounts
// read-only (docs/spec.md [probes.read-only]: framework.ReadOnlyMount, makeMounts' decision):
// a bind mount of what the kubelet set up (a pod in a user namespace: its idmapped mount,
// idmapped already) made read-only with MS_REMOUNT|MS_BIND|MS_RDONLY, as runc mounts a
// readOnly volume: the top mount only, mounts below it keep their flags. roots become the
// read-only mounts the probes use.
func readOnlyMounts(pod *corev1.Pod, p Pod, vols []framework.VolumeObservation, roots map[string]string, idmapped, rro bool, probes []framework.Probe) error {
	for i, v := range pod.Spec.Volumes {
		src, ok := roots[v.Name]
		if !ok {
			continue
		}
		m, _ := framework.ProbeMount(pod, v.Name)
		ro := framework.ReadOnlyMount(pod, v)
		// docs/spec.md [mounts.bind-mount-options]: the options the kubelet passed (it admitted
		// the pod, so the runtime applies them); a volume an exec probe runs in is bound too,
		// with exactly its container's flags, whatever the case root's filesystem is mounted with.
		flags := bindFlags(m.BindMountOptions)
		execs := slices.ContainsFunc(probes, func(pr framework.Probe) bool { return pr.Volume == v.Name && pr.Op == framework.OpExec })
		if !ro && flags == 0 && !execs {
			continue
		}
		if len(vols[i].Paths) > 0 && vols[i].Paths[0].Type == snapshot.Absent {
			continue // nothing to mount
		}
		rt, ok := p.(Runtime)
		if !ok {
			return fmt.Errorf("volume %q is mounted read-only or with options in the pod, and this target's node cannot play the runtime's mount", v.Name)
		}
		dst := src
		if !idmapped {
			dst = filepath.Join(rt.RuntimeDir(), v.Name)
			if err := bindMount(src, dst); err != nil {
				return fmt.Errorf("volume %q, as the pod mounts it: %w", v.Name, err)
			}
		}
		if ro {
			flags |= syscall.MS_RDONLY
		}
		if err := syscall.Mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|flags, ""); err != nil {
			return fmt.Errorf("volume %q, as the pod mounts it: remount %s (flags %#x): %w", v.Name, dst, flags, err)
		}
		if recursive, _ := framework.RecursiveReadOnly(m, rro); recursive {
			// docs/spec.md [mounts.recursive-read-only]: runc's rro, every mount below too.
			attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
			if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &attr); err != nil {
				return fmt.Errorf("volume %q, recursive read-only in the pod: mount_setattr %s: %w", v.Name, dst, err)
			}
		}
		roots[v.Name] = dst
	}
	return nil
}

// bindFlags are the mount flags of bindMountOptions (KEP-5855: noexec, nodev, nosuid).
func bindFlags(opts []string) uintptr {
	var flags uintptr
	for _, o := range opts {
		switch o {
		case "noexec":
			flags |= syscall.MS_NOEXEC
		case "nodev":
			flags |= syscall.MS_NODEV
		case "nosuid":
			flags |= syscall.MS_NOSUID
		}
	}
	return flags
}

// imageVolumes plays the runtime's part of every image volume the node set up (docs/spec.md
// [mounts.image-volume]; the kubelet's plugin is a stub): the probe image's files, owned by
// root with their layer modes, unpacked in the pod's RuntimeDir once (containerd: one overlay
// per pod and image), where the volume's Path then points; the read-only mount is
// readOnlyMounts'.
func imageVolumes(pod *corev1.Pod, p Pod, set Volumes) error {
	for _, v := range pod.Spec.Volumes {
		r, ok := set[v.Name]
		if v.Image == nil || !ok || r.Err != "" {
			continue
		}
		rt, ok := p.(Runtime)
		if !ok {
			return fmt.Errorf("volume %q is an image volume, and this target's node cannot play the runtime that mounts it", v.Name)
		}
		dir := filepath.Join(rt.RuntimeDir(), "image-"+v.Name)
		if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(rt.RuntimeDir(), 0o755); err != nil {
				return err
			}
			if err := (probeimage.Image{}).Materialize(dir); err != nil {
				return fmt.Errorf("volume %q: unpack the probe image: %w", v.Name, err)
			}
		}
		set[v.Name] = Volume{Path: dir}
	}
	return nil
}

// bindMount binds src (a directory or a file) at dst, made for it, as a runtime binds a volume
// into a container (MS_BIND|MS_REC: mounts below src come along).
func bindMount(src, dst string) error {
	if err := mountinfo.MakePoint(src, dst); err != nil {
		return err
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s at %s: %w", src, dst, err)
	}
	return nil
}

// podOwners sets each disk entry's PodUID/PodGID from the same entry seen through the idmapped
// mount (ids as this process, on the host, sees them there, translated into the pod's range),
// where the pod sees another id (framework.PodOwners).
func podOwners(disk, mounted []framework.PathObservation, ns framework.IDMap) {
	inside := slices.Clone(mounted)
	for i := range inside {
		inside[i].UID, inside[i].GID = ns.Inside(inside[i].UID), ns.Inside(inside[i].GID)
	}
	framework.PodOwners(disk, inside)
}

// Observations is docs/spec.md step 6 without the paths: per volume of pod, in the pod's order,
// its type, medium and SetUp result from set. A volume set does not name failed to set up.
func Observations(pod *corev1.Pod, set Volumes) []framework.VolumeObservation {
	var out []framework.VolumeObservation
	for _, v := range pod.Spec.Volumes {
		vo := framework.VolumeObservation{Name: v.Name, Type: framework.VolumeType(v), SetUp: framework.SetUpOK}
		if v.EmptyDir != nil {
			vo.Medium = string(v.EmptyDir.Medium)
		}
		switch r, ok := set[v.Name]; {
		case !ok:
			vo.SetUp = "the node gave no SetUp result for this volume"
		case r.Err != "":
			vo.SetUp = framework.SortSELinuxLabels(r.Err)
		default:
			vo.SELinuxMount = r.SELinuxMount
		}
		out = append(out, vo)
	}
	return out
}

// Snapshot is docs/spec.md step 6 for one volume set up at path: the whole tree, or for a
// hostPath only its root (the harness never walks a host directory).
func Snapshot(v corev1.Volume, path string) ([]framework.PathObservation, error) {
	if v.HostPath != nil {
		return snapshot.Root(path)
	}
	return snapshot.Tree(path)
}
