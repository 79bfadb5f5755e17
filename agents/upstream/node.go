package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/configmap"
	"k8s.io/kubernetes/pkg/volume/downwardapi"
	"k8s.io/kubernetes/pkg/volume/emptydir"
	"k8s.io/kubernetes/pkg/volume/hostpath"
	imagevolume "k8s.io/kubernetes/pkg/volume/image"
	"k8s.io/kubernetes/pkg/volume/projected"
	"k8s.io/kubernetes/pkg/volume/secret"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"

	"github.com/volperm/volperm/framework/execproto"
)

// answer is the kubelet's answer to one setup or teardown request (docs/exec-protocol.md): a
// setup is a kubelet (re)start and the volume manager's mount of every volume; a teardown
// unmounts every volume a setup mounted. What survives between calls (the plugins' ready
// markers, the volumes set up) lives in the request's stateDir, as a kubelet's lives on disk.
func answer(op string, req *execproto.Request, version string) (any, error) {
	if req.ProtocolVersion != version {
		return nil, fmt.Errorf("request in protocol %q; this agent speaks %q here", req.ProtocolVersion, version)
	}
	if req.Pod == nil {
		return nil, errors.New("request has no pod")
	}
	n, err := newNode(req)
	if err != nil {
		return nil, err
	}
	switch op {
	case execproto.OpSetUp:
		// The kubelet admits the pod before its volume manager mounts anything.
		rej := n.rejection()
		if rej == nil {
			rej = n.declaredFeaturesRejection()
		}
		if rej != nil {
			n.stop()
			return execproto.SetUpResponse{ProtocolVersion: version, Rejected: rej}, nil
		}
		err := n.setUp()
		n.stop() // the kubelet's process ends with the call
		if err != nil {
			return nil, err
		}
		if err := n.saveMounted(); err != nil {
			return nil, err
		}
		resp := execproto.SetUpResponse{ProtocolVersion: version}
		if resp.Container, err = n.containerSecurity(); err != nil {
			return nil, err
		}
		for _, v := range n.volumes {
			r := execproto.VolumeResult{Name: v.vol.Name, OK: v.err == nil, SELinuxMount: n.selinux[v.vol.Name].label}
			if v.err != nil {
				r.Error = v.err.Error()
			}
			resp.Volumes = append(resp.Volumes, r)
		}
		// The sandbox's user namespace: the kubelet allocates it when it creates the pod's
		// sandbox, after the volumes are mounted (v1.37 kuberuntime_sandbox.go
		// generatePodSandboxLinuxConfig -> NamespacesForPod -> GetOrCreateUserNamespaceMappings).
		if resp.UserNamespace, resp.SandboxError, err = n.userNamespace(); err != nil {
			return nil, err
		}
		return resp, nil
	case execproto.OpTearDown:
		resp := execproto.TearDownResponse{ProtocolVersion: version, OK: true}
		if err := n.tearDown(); err != nil {
			resp.OK, resp.Error = false, err.Error()
		}
		return resp, nil
	}
	return nil, fmt.Errorf("unknown operation %q: use %s, %s, %s or %s", op, execproto.OpSetUp, execproto.OpTearDown, execproto.OpAdmit, execproto.OpServe)
}

// node is one pod on the upstream kubelet's volume code.
type node struct {
	stateDir    string
	kubeletRoot string
	hostRoot    string
	pod         *corev1.Pod
	dirs        map[string]string // volume name -> the directory the harness gave
	gates       map[string]bool   // the kubelet gates in force
	// sources are the secrets' and configMaps' data the API objects hold now.
	sources map[string]map[string]string
	volumes []*podVolume
	// noUserNamespaces: the node's runtime reports no user namespace support (request
	// runtimeLacks, docs/spec.md [userns.runtime]).
	noUserNamespaces bool
	// noSupplementalGroupsPolicy: the node's runtime does not report supplementalGroupsPolicy
	// (docs/spec.md [groups.admit]).
	noSupplementalGroupsPolicy bool
	// noMountOptions: the runtime applies no bind mount options (docs/spec.md
	// [mounts.bind-mount-options]).
	noMountOptions bool
	// seLinuxNode is the node's SELinux side when it has SELinux on (request seLinux), and
	// selinux its volume manager's decision for each volume a container uses (setUp); both nil
	// otherwise.
	seLinuxNode *execproto.SELinux
	selinux     map[string]seLinuxDecision
	// k is the running "kubelet process": its VolumeHost and plugins. A restart replaces it.
	k *kubelet
}

// podVolume is one volume of the pod as the kubelet's plugins see it.
type podVolume struct {
	vol     corev1.Volume // hostPath paths mapped into the host root
	path    string        // where the mounter put it (GetPath)
	err     error         // the last SetUp's error
	mounted bool          // some setup created it: teardown must run
}

// kubelet is what a kubelet process holds for volumes: the host and its plugin manager.
type kubelet struct {
	host *volumeHost
}

func newNode(req *execproto.Request) (*node, error) {
	kubeletRoot := filepath.Join(req.StateDir, "kubelet")
	n := &node{stateDir: req.StateDir, kubeletRoot: kubeletRoot, hostRoot: req.HostRoot, pod: req.Pod.DeepCopy(),
		dirs: map[string]string{}, gates: req.KubeletGates, sources: req.Sources,
		noUserNamespaces:           slices.Contains(req.RuntimeLacks, execproto.RuntimeUserNamespaces),
		noSupplementalGroupsPolicy: slices.Contains(req.RuntimeLacks, execproto.RuntimeSupplementalGroupsPolicy),
		noMountOptions:             slices.Contains(req.RuntimeLacks, execproto.RuntimeMountOptions),
		seLinuxNode:                req.SELinux}
	for _, v := range req.Volumes {
		n.dirs[v.Name] = v.Dir
	}
	mounted, err := n.loadMounted()
	if err != nil {
		return nil, err
	}
	for _, v := range n.pod.Spec.Volumes {
		pv := &podVolume{vol: *v.DeepCopy(), mounted: mounted[v.Name]}
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
		if err := installFixtureDriver(n.flexDir()); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// mountedFile records, in the pod's stateDir, the volumes a setup has mounted: the teardown,
// another call (another process when the agent is driven a process per call), unmounts them.
const mountedFile = "upstream-mounted.json"

func (n *node) loadMounted() (map[string]bool, error) {
	out := map[string]bool{}
	b, err := os.ReadFile(filepath.Join(n.stateDir, mountedFile))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("read %s: %w", mountedFile, err)
	}
	return out, nil
}

func (n *node) saveMounted() error {
	out := map[string]bool{}
	for _, v := range n.volumes {
		if v.mounted {
			out[v.vol.Name] = true
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.stateDir, mountedFile), b, 0600)
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

// flexDir is the kubelet's flexVolume plugin dir: one for the agent's process, below its
// TMPDIR (the harness removes that with its work dir), never below a case root. The real prober
// watches it and makes it again when it is removed (pkg/volume/flexvolume probe.go
// handleWatchEvent): a watcher not yet gone when the harness removed a case root would
// otherwise put a directory back into it.
func (n *node) flexDir() string {
	return filepath.Join(os.TempDir(), "volperm-upstream-agent", "volume-plugins")
}

func (n *node) hasFlex() bool {
	for _, v := range n.volumes {
		if v.vol.FlexVolume != nil {
			return true
		}
	}
	return false
}

// start starts a "kubelet process": a fresh VolumeHost with the real plugins (emptyDir,
// hostPath, secret, configMap, downwardAPI, projected; flexVolume through the real prober of
// its plugin dir when the pod has a flexVolume).
func (n *node) start() error {
	mem, err := memTotal()
	if err != nil {
		return err
	}
	host := newVolumeHost(n.kubeletRoot, n.dirs, sourceObjects(n.pod, n.sources), nodeAllocatable(mem))
	plugins := inlinePlugins()
	var prober volume.DynamicPluginProber
	if n.hasFlex() {
		prober = &flexView{dir: n.flexDir()}
	}
	if err := host.pluginMgr.InitPlugins(plugins, prober, host); err != nil {
		return fmt.Errorf("init volume plugins: %w", err)
	}
	n.k = &kubelet{host: host}
	return nil
}

func (n *node) stop() { n.k = nil }

// inlinePlugins are the real plugins of the inline volume types volperm sets up (emptyDir,
// hostPath, secret, configMap, downwardAPI, projected, image), fresh for one plugin manager.
func inlinePlugins() []volume.VolumePlugin {
	var plugins []volume.VolumePlugin
	plugins = append(plugins, emptydir.ProbeVolumePlugins()...)
	plugins = append(plugins, hostpath.ProbeVolumePlugins(volume.VolumeConfig{})...)
	plugins = append(plugins, secret.ProbeVolumePlugins()...)
	plugins = append(plugins, configmap.ProbeVolumePlugins()...)
	plugins = append(plugins, downwardapi.ProbeVolumePlugins()...)
	plugins = append(plugins, projected.ProbeVolumePlugins()...)
	// v1.37 cmd/kubelet/app/plugins.go registers it with the ImageVolume gate on (locked from
	// v1.36): a stub, the runtime mounts the image (docs/spec.md [mounts.image-volume]).
	return append(plugins, imagevolume.ProbeVolumePlugins()...)
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
	if n.seLinuxNode != nil {
		// docs/spec.md "SELinux mount decisions": the volume manager decides before it mounts.
		var err error
		if n.selinux, err = seLinuxDecide(n.seLinuxNode, n.pod, n.gates, n.k.host); err != nil {
			return err
		}
	}
	return withGates(n.gates, func() error {
		for _, v := range n.volumes {
			switch d, decided := n.selinux[v.vol.Name]; {
			case decided && d.err != nil:
				v.err = d.err // never mounted
			case n.selinux != nil && v.vol.PersistentVolumeClaim != nil:
				v.err = nil // its PersistentVolume is not mounted here: the decision is all
			default:
				v.err = n.hostErr(n.setUpVolume(v))
			}
		}
		return nil
	})
}

func (n *node) setUpVolume(v *podVolume) error {
	spec := volume.NewSpecFromVolume(v.vol.DeepCopy())
	plugin, err := n.k.host.pluginMgr.FindPluginBySpec(spec)
	if err != nil {
		if perr := flexProbeError(); v.vol.FlexVolume != nil && perr != nil {
			return fmt.Errorf("%w (the flexVolume prober: %v)", err, perr)
		}
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
