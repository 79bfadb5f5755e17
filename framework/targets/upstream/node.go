package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/configmap"
	"k8s.io/kubernetes/pkg/volume/downwardapi"
	"k8s.io/kubernetes/pkg/volume/emptydir"
	"k8s.io/kubernetes/pkg/volume/flexvolume"
	"k8s.io/kubernetes/pkg/volume/hostpath"
	"k8s.io/kubernetes/pkg/volume/projected"
	"k8s.io/kubernetes/pkg/volume/secret"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
	"k8s.io/utils/exec"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot"
	"github.com/volperm/volperm/framework/hostfix"
	"github.com/volperm/volperm/framework/knowndiff"
	"github.com/volperm/volperm/framework/lifecycle"
	"github.com/volperm/volperm/hostfeature"
	refkubelet "github.com/volperm/volperm/nodeimpl/kubelet"
)

// Node is the kubelet half: the real v1.37 volume plugins under a fresh root per case.
type Node struct {
	roots *caseroot.Roots
}

// NewNode checks the work dir the node makes its case roots in.
func NewNode(opts framework.TargetOptions) (*Node, error) {
	if opts.Arg != "" {
		return nil, fmt.Errorf("kubelet %q takes no argument (got %q)", Name, opts.Arg)
	}
	roots, err := caseroot.New(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	return &Node{roots: roots}, nil
}

// Info names the upstream kubelet and its modules.
func (n *Node) Info() framework.TargetInfo { return info() }

// Close removes every case root a cancelled run left, unmounting first.
func (n *Node) Close() error { return n.roots.RemoveAll() }

// KnownDifference explains a case upstream v1.37's kubelet is expected to fail (KnownDifferences).
func (n *Node) KnownDifference(c *framework.Case) (string, bool) { return knowndiff.Explain(c) }

// SupportsNode reports whether the upstream kubelet can run c's node side here.
func (n *Node) SupportsNode(c *framework.Case, a framework.Admitted) (bool, string) {
	if len(a.Admission.PreservePermissions) > 0 {
		return false, "upstream v1.37 has no preservePermissions (seed 002 is a proposal)"
	}
	return NodeSupports(c)
}

// ObserveNode runs the node lifecycle (framework/lifecycle) of the pod admitted by any
// apiserver on the real v1.37 volume plugins, with c's host fixtures, under a new case root.
// Cases run one at a time: they flip the process-global feature gate.
func (u *Node) ObserveNode(ctx context.Context, c *framework.Case, a framework.Admitted) (vols []framework.VolumeObservation, probes []framework.ProbeResult, err error) {
	caseMu.Lock()
	defer caseMu.Unlock()
	root, err := u.roots.Make("volperm-upstream-")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if rerr := u.roots.Remove(root); rerr != nil {
			err = errors.Join(err, rerr)
			vols, probes = nil, nil
		}
	}()
	hostRoot := filepath.Join(root, "host")
	if err := hostfix.Create(hostRoot, c.Host); err != nil {
		return nil, nil, err
	}
	n, err := newNode(root, filepath.Join(root, "kubelet"), hostRoot, a.Pod, c)
	if err != nil {
		return nil, nil, err
	}
	return lifecycle.Observe(ctx, c, a, n)
}

// SetUp is the first kubelet start and its mount of every volume (lifecycle.Pod).
func (n *node) SetUp(context.Context) (lifecycle.Volumes, error) {
	if err := n.setUp(); err != nil {
		return nil, err
	}
	return n.results(), nil
}

// UpdateSources is the kubelet's sync after the pod's secrets and configMaps changed to
// sources (docs/spec.md [steps.update-sources], lifecycle.SourceUpdater): the API objects now
// hold the new data and the volumes whose plugin RequiresRemount (v1.37 secret, configMap,
// downwardAPI, projected) are mounted again through it; the others are not touched.
func (n *node) UpdateSources(_ context.Context, sources map[string]map[string]string) (lifecycle.Volumes, error) {
	n.sources = sources
	n.stop()
	if err := n.start(); err != nil {
		return nil, err
	}
	err := withGates(n.gates, func() error {
		for _, v := range n.volumes {
			spec := volume.NewSpecFromVolume(v.vol.DeepCopy())
			plugin, err := n.k.host.pluginMgr.FindPluginBySpec(spec)
			if err != nil || !plugin.RequiresRemount(spec) {
				continue
			}
			v.err = n.hostErr(n.setUpVolume(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n.results(), nil
}

// results is every volume's latest SetUp result.
func (n *node) results() lifecycle.Volumes {
	out := lifecycle.Volumes{}
	for _, v := range n.volumes {
		lv := lifecycle.Volume{Path: v.path}
		if v.err != nil {
			lv.Err = v.err.Error()
		}
		out[v.vol.Name] = lv
	}
	return out
}

// SetGates puts the kubelet gates in force for the next SetUp (lifecycle.Pod).
func (n *node) SetGates(_ context.Context, g map[string]bool) error {
	n.gates = g
	return nil
}

// Restart is a new kubelet process (a fresh VolumeHost and plugins) mounting every volume again
// (lifecycle.Pod).
func (n *node) Restart(ctx context.Context) (lifecycle.Volumes, error) { return n.SetUp(ctx) }

// TearDown unmounts every volume through its plugin and stops the kubelet (lifecycle.Pod).
func (n *node) TearDown(context.Context) error { return n.tearDown() }

// BeforeProbes lets the probes' uids reach the volume roots (reachable, lifecycle.Prober).
func (n *node) BeforeProbes(roots map[string]string) error { return reachable(n.root, roots) }

// reachable lets every uid search the kubelet's directories between the case root and each
// volume (the kubelet makes some 0750): probes run on the host paths, standing in for the
// container's bind mount of the volume, which needs no access to its parents. Only
// directories above the volume roots change; the volumes stay as the plugins left them.
func reachable(root string, volumeRoots map[string]string) error {
	for _, vr := range volumeRoots {
		if !strings.HasPrefix(vr, root+"/") {
			continue // a hostPath outside the case root: nothing of the harness's to open
		}
		for d := filepath.Dir(vr); d != root && strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
			var st syscall.Stat_t
			if err := syscall.Stat(d, &st); err != nil {
				return fmt.Errorf("make volume parent searchable: %w", err)
			}
			if st.Mode&0111 != 0111 {
				if err := syscall.Chmod(d, (st.Mode&07777)|0111); err != nil {
					return fmt.Errorf("make volume parent searchable: %w", err)
				}
			}
		}
	}
	return nil
}

// HostNeeds: the upstream volume plugins mount tmpfs/hugetlbfs and chown on this machine, and
// probes run as other uids: what the reference kubelet needs for the same pod (kubelet.HostNeeds).
func (n *Node) HostNeeds(_ *framework.Case, a framework.Admitted) []hostfeature.Feature {
	return refkubelet.HostNeeds(a.Pod)
}

// NodeSupports reports whether the upstream node can run c's node side: only gates upstream
// has. What this machine must have for it is HostNeeds.
func NodeSupports(c *framework.Case) (bool, string) {
	if ok, why := gateSupport(c.Gates.Kubelet); !ok {
		return false, why
	}
	for _, s := range c.After {
		if s.SetGates != nil {
			if ok, why := gateSupport(s.SetGates.Kubelet); !ok {
				return false, why
			}
		}
	}
	return true, ""
}

// node is one pod on the upstream kubelet's volume code.
type node struct {
	root        string // the case root
	kubeletRoot string
	hostRoot    string
	pod         *corev1.Pod
	c           *framework.Case
	gates       map[string]bool // the kubelet gates in force
	// sources are the secrets' and configMaps' data the API objects hold now.
	sources map[string]map[string]string
	volumes []*podVolume
	// k is the running "kubelet process": its VolumeHost and plugins. A restart replaces it.
	k *kubelet
}

// podVolume is one volume of the pod as the kubelet's plugins see it.
type podVolume struct {
	vol     corev1.Volume // hostPath paths mapped into the host root
	path    string        // where the mounter put it (GetPath)
	err     error         // the last SetUp's error
	mounted bool          // some SetUp created it: teardown must run
}

// kubelet is what a kubelet process holds for volumes: the host and its plugin manager.
type kubelet struct {
	host *volumeHost
	stop context.CancelFunc // stops the flexVolume prober's watcher
}

func newNode(root, kubeletRoot, hostRoot string, pod *corev1.Pod, c *framework.Case) (*node, error) {
	n := &node{root: root, kubeletRoot: kubeletRoot, hostRoot: hostRoot, pod: pod.DeepCopy(), c: c, gates: map[string]bool{}, sources: c.Sources}
	for k, v := range c.Gates.Kubelet {
		n.gates[k] = v
	}
	for _, v := range n.pod.Spec.Volumes {
		pv := &podVolume{vol: *v.DeepCopy()}
		if hp := pv.vol.HostPath; hp != nil {
			// The real plugin checks the path exactly as given, so the pod's hostPath is moved
			// into the harness's host root before the plugin sees it (and mapped back in error
			// texts by hostErr): the pod names /var/run/x, the plugin checks HOSTROOT/var/run/x.
			hp.Path = n.hostPath(hp.Path)
		}
		n.volumes = append(n.volumes, pv)
	}
	if err := os.MkdirAll(filepath.Join(kubeletRoot, "plugins", "kubernetes.io~empty-dir"), 0750); err != nil {
		return nil, fmt.Errorf("make kubelet root: %w", err)
	}
	if n.hasFlex() {
		if err := installFixtureDriver(n.flexDir(), c.Storage); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// hostPath maps a pod's hostPath path into the host root, keeping its spelling (no Clean), so
// that removing the host-root prefix gives back exactly what the pod wrote.
func (n *node) hostPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return n.hostRoot + p
	}
	return n.hostRoot + "/" + p
}

// hostErr names the pod's paths in a plugin error, never the harness's host root.
func (n *node) hostErr(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.ReplaceAll(err.Error(), n.hostRoot, ""))
}

func (n *node) flexDir() string { return filepath.Join(n.kubeletRoot, "volume-plugins") }

func (n *node) hasFlex() bool {
	for _, v := range n.volumes {
		if v.vol.FlexVolume != nil {
			return true
		}
	}
	return false
}

func (n *node) volume(name string) *podVolume {
	for _, v := range n.volumes {
		if v.vol.Name == name {
			return v
		}
	}
	return nil
}

// start starts a "kubelet process": a fresh VolumeHost with the real plugins (emptyDir,
// hostPath, secret, configMap, downwardAPI, projected; flexVolume through the real prober of
// its plugin dir when the pod has a flexVolume).
func (n *node) start() error {
	mem, err := memTotal()
	if err != nil {
		return err
	}
	host := newVolumeHost(n.kubeletRoot, sourceObjects(n.pod, n.sources), nodeAllocatable(mem))
	var plugins []volume.VolumePlugin
	plugins = append(plugins, emptydir.ProbeVolumePlugins()...)
	plugins = append(plugins, hostpath.ProbeVolumePlugins(volume.VolumeConfig{})...)
	plugins = append(plugins, secret.ProbeVolumePlugins()...)
	plugins = append(plugins, configmap.ProbeVolumePlugins()...)
	plugins = append(plugins, downwardapi.ProbeVolumePlugins()...)
	plugins = append(plugins, projected.ProbeVolumePlugins()...)
	ctx, cancel := context.WithCancel(context.Background())
	var prober volume.DynamicPluginProber
	if n.hasFlex() {
		prober = flexvolume.GetDynamicPluginProber(ctx, n.flexDir(), exec.New())
	}
	if err := host.pluginMgr.InitPlugins(plugins, prober, host); err != nil {
		cancel()
		return fmt.Errorf("init volume plugins: %w", err)
	}
	n.k = &kubelet{host: host, stop: cancel}
	return nil
}

func (n *node) stop() {
	if n.k != nil {
		n.k.stop()
		n.k = nil
	}
}

// setUp is a kubelet (re)start followed by the volume manager's mount of every volume, in pod
// order, with the kubelet gates in force (v1.37 operation_generator.go GenerateMountVolumeFunc:
// NewMounter, then SetUp with the pod's fsGroup and fsGroupChangePolicy). One failing volume
// does not stop the others.
func (n *node) setUp() error {
	n.stop()
	if err := n.start(); err != nil {
		return err
	}
	return withGates(n.gates, func() error {
		for _, v := range n.volumes {
			v.err = n.hostErr(n.setUpVolume(v))
		}
		return nil
	})
}

func (n *node) setUpVolume(v *podVolume) error {
	spec := volume.NewSpecFromVolume(v.vol.DeepCopy())
	plugin, err := n.k.host.pluginMgr.FindPluginBySpec(spec)
	if err != nil {
		return err
	}
	mounter, err := plugin.NewMounter(spec, n.pod)
	if err != nil {
		return err
	}
	v.path = mounter.GetPath()
	v.mounted = true
	args := volume.MounterArgs{FsUser: volumeutil.FsUserFrom(n.pod), DesiredSize: desiredSize(n.pod, &v.vol)}
	if sc := n.pod.Spec.SecurityContext; sc != nil {
		args.FsGroup, args.FSGroupChangePolicy = sc.FSGroup, sc.FSGroupChangePolicy
	}
	return mounter.SetUp(args)
}

// desiredSize is the kubelet's desired size limit of a local ephemeral volume (v1.37
// pkg/kubelet/volumemanager/cache/desired_state_of_world.go AddPodToVolume); emptyDir uses it
// for a quota where the filesystem supports one.
func desiredSize(pod *corev1.Pod, v *corev1.Volume) *resource.Quantity {
	if !volumeutil.IsLocalEphemeralVolume(*v) {
		return nil
	}
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	storage := limits[corev1.ResourceEphemeralStorage]
	size := resource.NewQuantity(storage.Value(), resource.BinarySI)
	if e := v.EmptyDir; e != nil && e.SizeLimit != nil && e.SizeLimit.Value() > 0 &&
		(size.Value() == 0 || e.SizeLimit.Value() < size.Value()) {
		size = resource.NewQuantity(e.SizeLimit.Value(), resource.BinarySI)
	}
	return size
}

// tearDown unmounts every volume a SetUp created through its plugin's unmounter, in reverse
// pod order, as the kubelet does (v1.37 GenerateUnmountVolumeFunc: NewUnmounter, TearDown,
// which is TearDownAt(GetPath()) except for hostPath, whose TearDownAt refuses), and stops the
// kubelet.
func (n *node) tearDown() error {
	defer n.stop()
	if n.k == nil {
		if err := n.start(); err != nil {
			return err
		}
	}
	var errs []error
	for i := len(n.volumes) - 1; i >= 0; i-- {
		v := n.volumes[i]
		if !v.mounted {
			continue
		}
		spec := volume.NewSpecFromVolume(v.vol.DeepCopy())
		plugin, err := n.k.host.pluginMgr.FindPluginBySpec(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("tear down volume %q: %w", v.vol.Name, err))
			continue
		}
		u, err := plugin.NewUnmounter(spec.Name(), n.pod.UID)
		if err != nil {
			errs = append(errs, fmt.Errorf("tear down volume %q: %w", v.vol.Name, err))
			continue
		}
		if err := u.TearDown(); err != nil {
			errs = append(errs, fmt.Errorf("tear down volume %q: %w", v.vol.Name, n.hostErr(err)))
			continue
		}
		v.mounted = false
	}
	return errors.Join(errs...)
}

// memTotal is the machine's memory in bytes (/proc/meminfo MemTotal).
func memTotal() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse /proc/meminfo MemTotal %q: %w", f[1], err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("/proc/meminfo has no MemTotal")
}
