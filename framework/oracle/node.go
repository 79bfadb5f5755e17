package oracle

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// ok is a successful SetUp.
const ok = framework.SetUpOK

// kubelet is the node model: the host, the gates in force and every volume of the pod.
type kubelet struct {
	gates map[string]bool
	pod   *corev1.Pod
	// admitted is the pod as the apiserver stored it, before the kubelet's release decoded it
	// ([steps.kubelet-release] decodes it again).
	admitted *corev1.Pod
	preserve map[string]bool
	host     *node
	sources  map[string]map[string]string
	storage  map[string][]framework.File
	vols     []*volume
	// userns: the pod runs in a user namespace of its own (hostUsers: false).
	userns bool
	// rro: the runtime can make recursive read-only mounts (the case does not say it lacks them).
	rro bool
	// selinux is the node's SELinux decision for each volume a container uses (Case.SELinux);
	// nil on a node with SELinux off.
	selinux map[string]seLinuxVolume
	// setups counts the SetUps of every volume done so far (0 during the first).
	setups int
	// tr records the rules applied (Explain); nil for Expect.
	tr *tracer
}

// volume is one volume of the pod on the node.
type volume struct {
	spec *corev1.Volume
	typ  string
	// root is the volume as the container sees it (hostPath: what is at the path, symlinks
	// followed; nil when nothing is there); top is where absolute symlinks resolve.
	root, top *node
	// ready is the kubelet's "set up before" state (emptyDir ready marker, AtomicWriter data).
	ready bool
	// populated is the flexVolume fixture driver's "mounted once".
	populated bool
	// result is the latest SetUp's result: ok or the error text.
	result string
	// written is the payload of an AtomicWriter volume's last write.
	written map[string]fileSpec
}

func newKubelet(c *framework.Case, adm admitted, t *tracer) *kubelet {
	if len(c.Host) > 0 {
		t.hit(rule.HostFixtures)
	}
	k := &kubelet{
		tr:       t,
		gates:    map[string]bool{},
		pod:      adm.pod,
		userns:   framework.InUserNamespace(adm.pod),
		preserve: adm.preserve,
		// docs/spec.md "The order of events" 3: host fixtures first.
		host:    buildHost(c.Host),
		sources: c.Sources,
		storage: c.Storage,
	}
	for name, on := range c.Gates.Kubelet {
		k.gates[name] = on
	}
	k.admitted = adm.pod.DeepCopy()
	// docs/spec.md "Releases": the kubelet decodes the pod as its release knows it.
	kubeletDecode(c.Releases.Of(false), adm.pod, t)
	for i := range adm.pod.Spec.Volumes {
		v := &adm.pod.Spec.Volumes[i]
		k.vols = append(k.vols, &volume{spec: v, typ: typeName(&v.VolumeSource)})
	}
	if c.SELinux != nil {
		// docs/spec.md "SELinux mount decisions": the volume manager decides before any mount.
		k.selinux = seLinuxDecide(c, adm.pod, t)
	}
	return k
}

// setUpAll is one SetUp of every volume in pod order; one failure does not stop the others
// (docs/spec.md "The order of events" 4, and 5 for restartKubelet).
func (k *kubelet) setUpAll() {
	for _, v := range k.vols {
		v.result = k.setUp(v)
	}
	k.setups++
}

// walk is the ownership walk of volume v from root (changeOwnership), recorded as applied.
func (k *kubelet) walk(v *volume, root *node, fsGroup int64, readOnly bool) {
	k.tr.hit(rule.WalkMask, cond(rule.Access, setOr(readOnly, "read-only", "read-write")), cond(rule.Type, v.typ), setUpValue(k.setups))
	if k.tr != nil {
		k.tr.hit(rule.WalkTree, walkEntries(root)...)
	}
	changeOwnership(root, fsGroup, readOnly)
}

func (k *kubelet) setUp(v *volume) string {
	s := &v.spec.VolumeSource
	if d := k.selinux[v.spec.Name]; d.err != "" {
		return d.err // [selinux.multiple-labels], [selinux.conflict]: never mounted
	}
	switch {
	case s.PersistentVolumeClaim != nil && k.selinux != nil:
		// docs/spec.md "SELinux mount decisions": only the decision is observed here.
		return ok
	case s.EmptyDir != nil:
		return k.setUpEmptyDir(v)
	case s.HostPath != nil:
		return k.setUpHostPath(v)
	case atomicWriterKind(s) != "":
		return k.setUpAtomicWriter(v)
	case s.FlexVolume != nil:
		return k.setUpFlexVolume(v)
	case s.Image != nil:
		return k.setUpImage(v)
	}
	return fmt.Sprintf("volume type %q is outside volperm's node model", v.typ)
}

// fsGroup is the pod's fsGroup, nil when unset.
func (k *kubelet) fsGroup() *int64 {
	if sc := k.pod.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// step applies one docs/spec.md "The order of events" 5 step.
func (k *kubelet) step(s framework.Step) {
	switch s.Kind() {
	case framework.StepChmod:
		if v := k.volume(s.Chmod.Volume); v != nil {
			k.tr.hit(rule.StepChmod, cond(rule.Type, v.typ))
		}
		k.chmod(s.Chmod)
	case framework.StepSetGates:
		// Gates merge into those in force; only the kubelet's matter once the pod exists.
		for name, on := range s.SetGates.Kubelet {
			k.tr.hit(rule.StepSetGates, cond(rule.Gate, onOff(on)))
			k.gates[name] = on
		}
	case framework.StepRestartKubelet:
		for _, v := range k.vols {
			k.tr.hit(rule.StepRestart, withMedium([]rule.Cond{cond(rule.Type, v.typ)}, &v.spec.VolumeSource)...)
		}
		k.setUpAll()
	case framework.StepKubeletRelease:
		// [steps.kubelet-release]: the gates that release lacks leave the configuration; the
		// new kubelet decodes the stored pod as its release knows it and sets every volume up
		// again (a ready emptyDir is left as it is).
		for _, v := range k.vols {
			k.tr.hit(rule.StepKubeletRelease, withMedium([]rule.Cond{cond(rule.Type, v.typ)}, &v.spec.VolumeSource)...)
		}
		k.gates = framework.GatesOfRelease(k.gates, s.KubeletRelease)
		pod := k.admitted.DeepCopy()
		kubeletDecode(s.KubeletRelease, pod, k.tr)
		k.pod = pod
		for i, v := range k.vols {
			v.spec = &pod.Spec.Volumes[i]
		}
		k.setUpAll()
	case framework.StepUpdateSources:
		// [steps.update-sources]: the kubelet's sync remounts the volumes whose plugin
		// RequiresRemount (the AtomicWriter ones), with the objects' new data; a volume whose
		// first SetUp failed is set up as a first time.
		k.sources = framework.MergeSources(k.sources, s.UpdateSources)
		for _, v := range k.vols {
			if atomicWriterKind(&v.spec.VolumeSource) == "" {
				continue
			}
			if v.ready {
				v.result = k.syncAtomicWriter(v)
			} else {
				v.result = k.setUp(v)
			}
		}
		k.setups++
	}
}

// chmod is a container's chmod(2) inside a volume: the path's symlinks are followed and the
// mode is set exactly. A path that is not there changes nothing.
func (k *kubelet) chmod(c *framework.Chmod) {
	v := k.volume(c.Volume)
	if v == nil || v.root == nil {
		return
	}
	if n, _ := resolveInVolume(v, c.Path); n != nil {
		n.mode = c.Mode & 07777
	}
}

// resolveInVolume resolves a volume-relative path following every symlink, as root.
func resolveInVolume(v *volume, p string) (*node, string) {
	f, errno := lookup(v.top, v.root, path.Clean(p), true, nil)
	if errno != "" {
		return nil, errno
	}
	return f.n, ""
}

func (k *kubelet) volume(name string) *volume {
	for _, v := range k.vols {
		if v.spec.Name == name {
			return v
		}
	}
	return nil
}

// prober is who makes probe p: p's user, in the pod's user namespace when it has one.
func (k *kubelet) prober(u framework.User) *prober { return &prober{User: u, userns: k.userns} }
