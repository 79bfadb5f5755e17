// Package kubelet is the reference kubelet's volume manager for one pod at a time: it sets up
// every volume of an admitted pod in pod order (emptyDir, hostPath, the AtomicWriter volumes,
// flexVolume), sets them up again on a kubelet restart, and tears everything down
// (docs/spec.md "The order of events", steps 4, 5 and 8).
package kubelet

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/nodeimpl/atomicwriter"
	"github.com/volperm/volperm/nodeimpl/emptydir"
	"github.com/volperm/volperm/nodeimpl/flexvolume"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/nodeimpl/hostpath"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
	"github.com/volperm/volperm/nodeimpl/mutant"
	"github.com/volperm/volperm/nodeimpl/ownership"
	"github.com/volperm/volperm/nodeimpl/release"
	"github.com/volperm/volperm/nodeimpl/selinux"
	"github.com/volperm/volperm/nodeimpl/userns"
)

// Volume type names, as in the API (framework.VolumeObservation.Type).
const (
	TypeEmptyDir    = "emptyDir"
	TypeHostPath    = "hostPath"
	TypeSecret      = "secret"
	TypeConfigMap   = "configMap"
	TypeDownwardAPI = "downwardAPI"
	TypeProjected   = "projected"
	TypeFlexVolume  = "flexVolume"
	TypeImage       = "image"
)

// Plugin directory names: v1.37 plugin names through utilstrings.EscapeQualifiedName ("/" -> "~").
const (
	pluginEmptyDir    = "kubernetes.io~empty-dir"
	pluginHostPath    = "kubernetes.io~host-path"
	pluginSecret      = "kubernetes.io~secret"
	pluginConfigMap   = "kubernetes.io~configmap"
	pluginDownwardAPI = "kubernetes.io~downward-api"
	pluginProjected   = "kubernetes.io~projected"
)

// wrapperPrefix is v1.37 kubeletVolumeHost.NewWrapperMounter's name for the emptyDir an
// AtomicWriter volume is built on: "wrapped_<volume name>".
const wrapperPrefix = "wrapped_"

// Config is a kubelet's configuration.
type Config struct {
	// RootDir is the kubelet's root directory, like /var/lib/kubelet.
	RootDir string
	// HostRoot is prepended to every hostPath path; "" = "/".
	HostRoot string
	// Gates are the kubelet's feature gates.
	Gates gates.Set
	// VolumeDirs, when set, says where each named volume lives instead of under RootDir (the
	// exec protocol hands an agent its directories); ready markers stay under RootDir.
	VolumeDirs map[string]string
	// Release is the kubelet's Kubernetes release ("" = the newest): it sets pods up as that
	// release decodes them (docs/spec.md "Releases").
	Release string
	// NoUserNamespaces: the node's runtime reports no user namespace support (docs/spec.md
	// [userns.runtime]).
	NoUserNamespaces bool
	// NoSupplementalGroupsPolicy: the node's runtime does not report supplementalGroupsPolicy
	// support (status.features; docs/spec.md [groups.admit]).
	NoSupplementalGroupsPolicy bool
	// NoMountOptions: the node's runtime does not apply bind mount options (CRI
	// RuntimeFeatures.mount_options; docs/spec.md [mounts.bind-mount-options]).
	NoMountOptions bool
}

// NoUserNamespacesMsg is v1.37 userns_manager.go GetOrCreateUserNamespaceMappings for a pod
// with hostUsers: false on a runtime without user namespace support.
const NoUserNamespacesMsg = "can't set `spec.hostUsers: false`, runtime does not support user namespaces"

// SandboxError is the kubelet failing to create a pod's sandbox (its FailedCreatePodSandBox
// event says "Failed to create pod sandbox: " and Msg).
type SandboxError struct{ Msg string }

func (e *SandboxError) Error() string { return "Failed to create pod sandbox: " + e.Msg }

// Pod is one admitted pod with what its volumes need beside the v1 API.
type Pod struct {
	// Pod is the admitted (defaulted, dropped) pod.
	Pod *corev1.Pod
	// PreservePermissions names the volumes carrying the proposed field after admission (seed 002).
	PreservePermissions []string
	// Sources is the data AtomicWriter volumes project: "secret/NAME", "configmap/NAME" -> key -> content.
	Sources map[string]map[string]string
	// Storage is the flexVolume fixture storage per volume name.
	Storage map[string][]flexvolume.StorageFile
	// SELinux is the node's SELinux side when it has SELinux on (nil: off): the PersistentVolumes
	// of the pod's claims, the CSIDrivers, the pods it runs already (nodeimpl/selinux).
	SELinux *selinux.Node
}

// VolumeResult is the outcome of setting up one volume.
type VolumeResult struct {
	Name string
	// Type is the volume's source: TypeEmptyDir, ..., or for a source the reference node has no
	// plugin for, its API name (nfs, csi, ...).
	Type string
	// Medium is the emptyDir's medium as the pod spec writes it ("", "Memory", "HugePages-2Mi").
	Medium string
	// Path is the volume's directory on this machine (hostPath: HostRoot + path).
	Path string
	// Err is the set-up error, nil on success.
	Err error
	// SELinuxMount is the label the volume is mounted with (-o context) on a node with SELinux
	// on; "" for none.
	SELinuxMount string
}

// Kubelet sets up and tears down the volumes of pods.
type Kubelet struct {
	rootDir    string
	host       hostpath.Host
	volumeDirs map[string]string
	release    string
	// noUserNamespaces: Config.NoUserNamespaces.
	noUserNamespaces bool
	// noSupplementalGroupsPolicy: Config.NoSupplementalGroupsPolicy.
	noSupplementalGroupsPolicy bool
	// noMountOptions: Config.NoMountOptions.
	noMountOptions bool

	mu    sync.Mutex
	gates gates.Set
}

// setUpBefore reports whether the pod's hostPath volume name was set up before, and records it
// in the pod's plugin directory, so that a kubelet restarted as a new process (an exec agent's
// next call) knows it too. Only the mutant hostpath-no-recheck-on-restart asks.
func (k *Kubelet) setUpBefore(pod *corev1.Pod, name string) bool {
	marker := k.readyDir(pod, pluginHostPath, name)
	if _, err := os.Stat(marker); err == nil {
		return true
	}
	_ = mkdirs(marker)
	return false
}

// New checks cfg and makes the kubelet's root directory.
func New(cfg Config) (*Kubelet, error) {
	if !filepath.IsAbs(cfg.RootDir) {
		return nil, fmt.Errorf("kubelet root dir %q: give an absolute path", cfg.RootDir)
	}
	if err := cfg.Gates.Validate(); err != nil {
		return nil, fmt.Errorf("kubelet gates: %w", err)
	}
	k := &Kubelet{rootDir: filepath.Clean(cfg.RootDir), host: hostpath.Host{Root: cfg.HostRoot}, gates: cfg.Gates, volumeDirs: cfg.VolumeDirs, release: cfg.Release, noUserNamespaces: cfg.NoUserNamespaces,
		noSupplementalGroupsPolicy: cfg.NoSupplementalGroupsPolicy, noMountOptions: cfg.NoMountOptions}
	if err := mkdirs(k.rootDir); err != nil {
		return nil, fmt.Errorf("make kubelet root dir: %w", err)
	}
	return k, nil
}

// SetGates restarts the kubelet with new gates; they apply from the next SetUp on.
func (k *Kubelet) SetGates(g gates.Set) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if mutant.On(mutant.GatesRestartKeepsOld) {
		return
	}
	if mutant.On(mutant.BlindGatesOffNotApplied) {
		merged := gates.Set{}
		maps.Copy(merged, k.gates)
		for name, on := range g {
			if on {
				merged[name] = true
			}
		}
		k.gates = merged
		return
	}
	k.gates = g
}

// SetRelease makes the kubelet one of release ("v1.36"; "" = the newest): the binary replaced,
// the process restarted on the same state; it applies from the next SetUp on (docs/spec.md
// [steps.kubelet-release]).
func (k *Kubelet) SetRelease(r string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.release = r
}

func (k *Kubelet) currentRelease() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.release
}

func (k *Kubelet) currentGates() gates.Set {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.gates
}

// SetUp sets up every volume of p in pod order; one failing volume does not stop the others
// (docs/spec.md step 4). Called again for a running pod it is a kubelet restart (step 5).
func (k *Kubelet) SetUp(p *Pod) []VolumeResult { return k.setUp(p, false) }

// Sync is the kubelet's periodic sync of a running pod whose secrets or configMaps changed
// (docs/spec.md [steps.update-sources]): only the volumes whose plugin requires a remount
// (secret, configMap, downwardAPI, projected: v1.37 RequiresRemount) are set up again, with
// p.Sources as they are now; the result has those volumes only.
func (k *Kubelet) Sync(p *Pod) []VolumeResult { return k.setUp(p, true) }

func (k *Kubelet) setUp(p *Pod, remountOnly bool) []VolumeResult {
	g := k.currentGates()
	rel := k.currentRelease()
	switch {
	case rel == "" || rel == release.Newest:
	case mutant.On(mutant.ReleaseKubeletKnowsAll):
		// A fork that backported KEP-5502's field without its gate.
		on := gates.Set{gates.EmptyDirVolumeMode: true}
		maps.Copy(on, g)
		on[gates.EmptyDirVolumeMode] = true
		g = on
	default:
		// docs/spec.md "Releases": a kubelet never sees a field its release does not know.
		q := *p
		q.Pod = p.Pod.DeepCopy()
		release.Decode(rel, q.Pod)
		p = &q
	}
	// docs/spec.md "SELinux mount decisions": the volume manager decides before it mounts.
	var decided map[string]selinux.Decision
	if p.SELinux != nil {
		n := *p.SELinux
		n.MountGate = release.SELinuxMount(rel)
		decided = selinux.Decide(&n, p.Pod)
	}
	out := make([]VolumeResult, 0, len(p.Pod.Spec.Volumes))
	for i := range p.Pod.Spec.Volumes {
		vol := &p.Pod.Spec.Volumes[i]
		if remountOnly && !requiresRemount(typeOf(vol)) {
			continue
		}
		d := decided[vol.Name]
		switch {
		case d.Err != nil:
			out = append(out, VolumeResult{Name: vol.Name, Type: typeOf(vol), Err: d.Err})
		case vol.PersistentVolumeClaim != nil && p.SELinux != nil:
			// Its PersistentVolume is not mounted here: the decision is all there is.
			out = append(out, VolumeResult{Name: vol.Name, Type: typeOf(vol), SELinuxMount: d.Label})
		default:
			r := k.setUpVolume(p, vol, g)
			r.SELinuxMount = d.Label
			out = append(out, r)
		}
	}
	return out
}

// requiresRemount is v1.37 RequiresRemount of the volume plugins: true for the AtomicWriter
// ones, whose content follows their objects.
func requiresRemount(typ string) bool {
	switch typ {
	case TypeSecret, TypeConfigMap, TypeDownwardAPI, TypeProjected:
		return true
	}
	return false
}

func (k *Kubelet) setUpVolume(p *Pod, vol *corev1.Volume, g gates.Set) VolumeResult {
	r := VolumeResult{Name: vol.Name, Type: typeOf(vol)}
	fail := func(err error) VolumeResult {
		r.Err = err
		return r
	}
	if hu := p.Pod.Spec.HostUsers; k.noUserNamespaces && hu != nil && !*hu && mutant.On(mutant.BlindUsernsRuntimeBeforeVolumes) {
		return fail(&SandboxError{Msg: NoUserNamespacesMsg})
	}
	switch r.Type {
	case TypeEmptyDir:
		r.Medium = string(vol.EmptyDir.Medium)
		r.Path = k.volumeDir(p.Pod, pluginEmptyDir, vol.Name)
		if err := mkdirs(filepath.Dir(r.Path)); err != nil {
			return fail(err)
		}
		return fail(emptydir.SetUp(emptydir.Volume{
			Dir:      r.Path,
			ReadyDir: k.readyDir(p.Pod, pluginEmptyDir, vol.Name),
			Source:   *vol.EmptyDir,
			Pod:      p.Pod,
			ModeGate: modeGate(g),
		}))
	case TypeHostPath:
		r.Path = k.host.RealPath(vol.HostPath.Path)
		if mutant.On(mutant.HostPathNoRecheck) && k.setUpBefore(p.Pod, vol.Name) {
			return r
		}
		fsGroup := podSecurityContext(p.Pod).FSGroup
		chownCreated := false
		if mutant.On(mutant.HostPathCreateChown) {
			_, missing := os.Lstat(r.Path)
			chownCreated = missing != nil && fsGroup != nil
		}
		err := k.host.SetUp(vol.HostPath.Path, vol.HostPath.Type)
		if err == nil && chownCreated {
			_ = os.Lchown(r.Path, -1, int(*fsGroup))
		}
		if err == nil && mutant.On(mutant.HostPathWalked) {
			_ = ownership.Apply(r.Path, fsGroup, false, nil)
		}
		return fail(err)
	case TypeSecret, TypeConfigMap, TypeDownwardAPI, TypeProjected:
		r.Path = k.volumeDir(p.Pod, atomicWriterPlugin(r.Type), vol.Name)
		return fail(k.setUpAtomicWriter(p, vol, r.Type, r.Path, g))
	case TypeFlexVolume:
		r.Path = k.volumeDir(p.Pod, escapeQualifiedName(vol.FlexVolume.Driver), vol.Name)
		if err := mkdirs(filepath.Dir(r.Path)); err != nil {
			return fail(err)
		}
		sc := podSecurityContext(p.Pod)
		return fail(flexvolume.SetUp(r.Path, vol.FlexVolume, p.Storage[vol.Name], sc.FSGroup, sc.FSGroupChangePolicy))
	case TypeImage:
		// v1.37 pkg/volume/image: a stub; the runtime mounts the image (GetPath "").
		if mutant.On(mutant.ImageVolumeRefused) {
			return fail(fmt.Errorf("volume type image is not supported by the reference node"))
		}
		if mutant.On(mutant.BlindImageFSGroupWalksEmptyPath) {
			sc := podSecurityContext(p.Pod)
			return fail(ownership.Apply(r.Path, sc.FSGroup, true, sc.FSGroupChangePolicy))
		}
		return r
	}
	r.Type = unsupportedTypeName(vol)
	return fail(fmt.Errorf("volume type %s is not supported by the reference node", r.Type))
}

// setUpAtomicWriter is v1.37 secret/configMap/downwardAPI/projected SetUpAt: the payload first
// (its errors leave nothing behind; file owners resolved with the kubelet's
// AtomicWriteVolumeUserFields gate), then the wrapped emptyDir, then AtomicWriter.Write with the
// ownership walk (read-only mask) as setPerms; a failed write tears the volume down.
func (k *Kubelet) setUpAtomicWriter(p *Pod, vol *corev1.Volume, typ, dir string, g gates.Set) error {
	// KEP-5936 (docs/spec.md [atomicwriter.owner]): file owners come from defaultUser / user only
	// with the kubelet's AtomicWriteVolumeUserFields gate on (v1.37 ResolvesFsUser reads the gate).
	userFields := g.Enabled(gates.AtomicWriteVolumeUserFields) || mutant.On(mutant.AtomicUserIgnoresGate)
	if _, set := g[gates.AtomicWriteVolumeUserFields]; !set && mutant.On(mutant.BlindGatesUserFieldsDefaultOn) {
		userFields = true
	}
	payload, err := atomicwriter.Payload(p.Pod, vol, p.Sources, userFields)
	if err != nil {
		return err
	}
	if err := mkdirs(filepath.Dir(dir)); err != nil {
		return err
	}
	// v1.37 wrappedVolumeSpec: configMap on the default medium, the others on Memory; no mode.
	// The wrapper gets the pod's fsGroup like upstream (mounterArgs are passed through), so its
	// own walk runs on the still empty root.
	wrapper := emptydir.Volume{
		Dir:      dir,
		ReadyDir: k.readyDir(p.Pod, pluginEmptyDir, wrapperPrefix+vol.Name),
		Source:   corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory},
		Pod:      p.Pod,
		ModeGate: g.Enabled(gates.EmptyDirVolumeMode),
	}
	if typ == TypeConfigMap && !mutant.On(mutant.AtomicConfigMapOnMemory) {
		wrapper.Source.Medium = corev1.StorageMediumDefault
	}
	if typ == TypeSecret && mutant.On(mutant.AtomicSecretOnDisk) {
		wrapper.Source.Medium = corev1.StorageMediumDefault
	}
	if err := emptydir.SetUp(wrapper); err != nil {
		return err
	}
	if err := makeNestedMountpoints(vol.Name, dir, p.Pod); err != nil {
		return err
	}

	fsGroup := podSecurityContext(p.Pod).FSGroup
	// Seed 002: with preservePermissions (and the kubelet gate on) SetVolumeOwnership is skipped.
	preserveGate := g.Enabled(gates.PreservePermissions)
	if mutant.On(mutant.GatesPreserveFromMode) {
		preserveGate = g.Enabled(gates.EmptyDirVolumeMode)
	}
	if mutant.On(mutant.PreserveIgnoresGate) {
		preserveGate = true
	}
	carries := slices.Contains(p.PreservePermissions, vol.Name)
	if typ == TypeProjected && mutant.On(mutant.BlindPreserveNotProjected) {
		carries = false
	}
	if mutant.On(mutant.PreserveAllVolumes) {
		carries = len(p.PreservePermissions) > 0
	}
	preserve := carries && preserveGate && !mutant.On(mutant.PreserveIgnored)
	setPerms := func() error {
		switch {
		case mutant.On(mutant.BlindAtomicUpdateNoWalk) && hasDataLink(dir):
			return nil
		case preserve && mutant.On(mutant.BlindPreserveFirstWriteOnly) && hasDataLink(dir):
			return ownership.Apply(dir, fsGroup, true, nil)
		case preserve, mutant.On(mutant.AtomicNoWalk):
			return nil
		case mutant.On(mutant.AtomicRWMask):
			return ownership.Apply(dir, fsGroup, false, nil)
		case mutant.On(mutant.AtomicWalkBeforeWrite) && fsGroup != nil:
			return os.Lchown(dir, -1, int(*fsGroup))
		}
		// v1.37 secret SetUpAt setPerms: the walk over the whole volume, the mounter's ReadOnly
		// attribute (true) selects the 0440 mask, no policy.
		return ownership.Apply(dir, fsGroup, true, nil)
	}
	if err := atomicwriter.Write(dir, payload, setPerms); err != nil {
		// v1.37 SetUpAt: a failed set-up is torn down (setupSuccess == false).
		if tdErr := emptydir.TearDown(dir, wrapper.ReadyDir); tdErr != nil {
			return errors.Join(err, fmt.Errorf("clean up after the failed write: %w", tdErr))
		}
		return err
	}
	return nil
}

// hasDataLink reports whether the AtomicWriter volume at dir already has its `..data` link: set
// during a Write, this one is an update of an earlier write. Only mutants ask.
func hasDataLink(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "..data"))
	return err == nil
}

// TearDown unmounts and removes every volume of p (docs/spec.md step 8): the emptyDir, wrapper
// and flexVolume volumes through their teardown, then whatever is still mounted under the pod's
// directory, then the directory itself. hostPath volumes are left alone (v1.37 hostPath
// TearDown does nothing). Tearing down a pod that is gone is no error.
func (k *Kubelet) TearDown(p *Pod) error {
	// The runtime's mounts first (its containers stop before the kubelet tears volumes down):
	// a bind of a volume with a mount below it holds that mount point busy.
	if err := mountinfo.UnmountBelow(k.RuntimeDir(p)); err != nil {
		return fmt.Errorf("tear down pod %s: the runtime's mounts: %w", p.Pod.UID, err)
	}
	var errs []error
	for i := range p.Pod.Spec.Volumes {
		vol := &p.Pod.Spec.Volumes[i]
		typ := typeOf(vol)
		switch typ {
		case TypeEmptyDir:
			errs = append(errs, emptydir.TearDown(k.volumeDir(p.Pod, pluginEmptyDir, vol.Name), k.readyDir(p.Pod, pluginEmptyDir, vol.Name)))
		case TypeSecret, TypeConfigMap, TypeDownwardAPI, TypeProjected:
			errs = append(errs, emptydir.TearDown(k.volumeDir(p.Pod, atomicWriterPlugin(typ), vol.Name), k.readyDir(p.Pod, pluginEmptyDir, wrapperPrefix+vol.Name)))
		case TypeFlexVolume:
			errs = append(errs, flexvolume.TearDown(k.volumeDir(p.Pod, escapeQualifiedName(vol.FlexVolume.Driver), vol.Name)))
		}
	}
	podDir := k.podDir(p.Pod)
	mounted := podDir // the mount table names real paths
	if real, err := filepath.EvalSymlinks(podDir); err == nil {
		mounted = real
	}
	errs = append(errs, mountinfo.UnmountAtOrBelow(mounted, 0))
	if err := errors.Join(errs...); err != nil {
		// Never remove across a mount point that is still there.
		return fmt.Errorf("tear down pod %s: %w", p.Pod.UID, err)
	}
	if err := os.RemoveAll(podDir); err != nil {
		return fmt.Errorf("tear down pod %s: remove %s: %w", p.Pod.UID, podDir, err)
	}
	return nil
}

// podDir is v1.37 kubelet getPodDir: <root>/pods/<uid>.
func (k *Kubelet) podDir(pod *corev1.Pod) string {
	return filepath.Join(k.rootDir, "pods", string(pod.UID))
}

// volumeDir is v1.37 kubelet getPodVolumeDir: <pod dir>/volumes/<plugin>/<volume>.
func (k *Kubelet) volumeDir(pod *corev1.Pod, plugin, name string) string {
	if d, ok := k.volumeDirs[name]; ok {
		return d
	}
	return filepath.Join(k.podDir(pod), "volumes", plugin, name)
}

// readyDir is v1.37 emptyDir getMetaDir: <pod dir>/plugins/<plugin>/<volume>.
func (k *Kubelet) readyDir(pod *corev1.Pod, plugin, name string) string {
	return filepath.Join(k.podDir(pod), "plugins", plugin, name)
}

// mkdirs makes dir and its missing parents 0755 whatever the umask: the probes run as other
// uids and reach volumes through these directories (v1.37 makes the pods dir 0750, but
// containers reach volumes through bind mounts, not through the path).
func mkdirs(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirs(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0755); err != nil && !os.IsExist(err) {
		return err
	}
	return os.Chmod(dir, 0755)
}

func typeOf(vol *corev1.Volume) string {
	switch {
	case vol.EmptyDir != nil:
		return TypeEmptyDir
	case vol.HostPath != nil:
		return TypeHostPath
	case vol.Secret != nil:
		return TypeSecret
	case vol.ConfigMap != nil:
		return TypeConfigMap
	case vol.DownwardAPI != nil:
		return TypeDownwardAPI
	case vol.Projected != nil:
		return TypeProjected
	case vol.FlexVolume != nil:
		return TypeFlexVolume
	case vol.Image != nil:
		return TypeImage
	}
	return ""
}

func atomicWriterPlugin(typ string) string {
	return map[string]string{
		TypeSecret:      pluginSecret,
		TypeConfigMap:   pluginConfigMap,
		TypeDownwardAPI: pluginDownwardAPI,
		TypeProjected:   pluginProjected,
	}[typ]
}

// PluginDir is the directory of vol's plugin under a pod's volumes/ (the plugin names above,
// a flexVolume's driver escaped): "" for a hostPath, which the kubelet mounts from its path, or
// a type this kubelet has no plugin for.
func PluginDir(vol corev1.Volume) string {
	switch typ := typeOf(&vol); typ {
	case TypeEmptyDir:
		return pluginEmptyDir
	case TypeFlexVolume:
		return escapeQualifiedName(vol.FlexVolume.Driver)
	default:
		return atomicWriterPlugin(typ)
	}
}

// escapeQualifiedName is k8s.io/utils/strings EscapeQualifiedName: "/" -> "~".
func escapeQualifiedName(in string) string {
	return strings.ReplaceAll(in, "/", "~")
}

func podSecurityContext(pod *corev1.Pod) corev1.PodSecurityContext {
	if pod.Spec.SecurityContext == nil {
		return corev1.PodSecurityContext{}
	}
	return *pod.Spec.SecurityContext
}

// unsupportedTypeName names a volume source the reference node has no plugin for by its JSON
// field name (nfs, persistentVolumeClaim, csi, ...).
func unsupportedTypeName(vol *corev1.Volume) string {
	s := vol.VolumeSource
	for name, set := range map[string]bool{
		"gcePersistentDisk": s.GCEPersistentDisk != nil, "awsElasticBlockStore": s.AWSElasticBlockStore != nil,
		"gitRepo": s.GitRepo != nil, "nfs": s.NFS != nil, "iscsi": s.ISCSI != nil,
		"glusterfs": s.Glusterfs != nil, "persistentVolumeClaim": s.PersistentVolumeClaim != nil,
		"rbd": s.RBD != nil, "cinder": s.Cinder != nil, "cephfs": s.CephFS != nil,
		"flocker": s.Flocker != nil, "fc": s.FC != nil, "azureFile": s.AzureFile != nil,
		"vsphereVolume": s.VsphereVolume != nil, "quobyte": s.Quobyte != nil, "azureDisk": s.AzureDisk != nil,
		"photonPersistentDisk": s.PhotonPersistentDisk != nil, "portworxVolume": s.PortworxVolume != nil,
		"scaleIO": s.ScaleIO != nil, "storageos": s.StorageOS != nil, "csi": s.CSI != nil,
		"ephemeral": s.Ephemeral != nil, "image": s.Image != nil,
	} {
		if set {
			return name
		}
	}
	return "(none)"
}

// mountsBelow lists the mount points at or under dir (symlinks resolved), deepest first.
func mountsBelow(dir string) ([]string, error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return mountinfo.AtOrBelow(dir)
}

// modeGate is the kubelet's EmptyDirVolumeMode gate (KEP-5502).
func modeGate(g gates.Set) bool {
	if _, set := g[gates.EmptyDirVolumeMode]; !set && mutant.On(mutant.GatesModeDefaultOn) {
		return true
	}
	return g.Enabled(gates.EmptyDirVolumeMode)
}

// UserNamespace is the kubelet's user namespace of p (hostUsers: false): its range, allocated
// once and kept in the pod's directory (nodeimpl/userns Allocate), and the directory where the
// runtime makes the pod's idmapped volume mounts, which TearDown unmounts and removes with the pod.
func (k *Kubelet) UserNamespace(p *Pod) (userns.Mapping, error) {
	if k.noUserNamespaces && !mutant.On(mutant.UsernsRuntimeIgnored) {
		if mutant.On(mutant.BlindUsernsRuntimeTextEmptyHandler) {
			return userns.Mapping{}, &SandboxError{Msg: `RuntimeClass handler "" does not support user namespaces`}
		}
		return userns.Mapping{}, &SandboxError{Msg: NoUserNamespacesMsg}
	}
	podDir := k.podDir(p.Pod)
	m, err := userns.Allocate(filepath.Join(k.rootDir, "pods"), podDir)
	if err != nil {
		return userns.Mapping{}, fmt.Errorf("user namespace of pod %s: %w", p.Pod.UID, err)
	}
	return m, nil
}

// RuntimeDir is the directory of the pod's where the runtime (the harness plays it) makes the
// mounts of its volumes for the pod's containers: idmapped, read-only. TearDown unmounts
// everything below the pod's directory and removes it.
func (k *Kubelet) RuntimeDir(p *Pod) string { return filepath.Join(k.podDir(p.Pod), "runtime") }
