package cluster

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/fixturedriver"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/nodeimpl/atomicwriter"
)

// podGroup says which probe pod c (admitted as pod) may share: the pods of cases with the same
// pod-level security context, hostPath cases apart (hostPathGroup); "" when it needs a pod of its
// own: a case with steps (a kubelet restart disturbs every volume of its pod), a projection of a
// key its source lacks (missingKey), mounts nested below an AtomicWriter volume (its mirrored
// containers, mirrorNested), a mount asking for recursiveReadOnly Enabled (a runtime that cannot
// fails the whole container: docs/spec.md [mounts.recursive-read-only]), a case whose probes run
// as its container (the self container has the case's container's ids: docs/spec.md
// [groups.policy]), a case whose mounts carry bindMountOptions (its pod may be rejected, its
// every container's mounts mirrored: docs/spec.md [mounts.bind-mount-options]), or every case
// when the target runs one pod per case.
func podGroup(c *framework.Case, pod *corev1.Pod, podPerCase bool) (string, error) {
	if podPerCase || len(c.After) > 0 || missingKey(c, pod) || nestedAtomic(pod) || asksRROEnabled(pod) || framework.HasContainerProbes(c) || framework.UsesBindMountOptions(pod) {
		return "", nil
	}
	b, err := json.Marshal(pod.Spec.SecurityContext)
	sc := string(b)
	// What the needs table says a case needs of a node beyond a stock one shapes its pod (a user
	// namespace, a runtime without a feature, ...): cases of different needs never share a pod,
	// whatever need a new area adds (issue 35).
	for _, n := range needs.Of(c) {
		if n.Node {
			sc += " need=" + n.Label
		}
	}
	if needs.HasTokenProjection(pod) {
		// The probe pod gives the token the case pod's FsUser (fsUserShape).
		sc += fmt.Sprintf(" fsUser=%s", fsUserWord(atomicwriter.FsUserFrom(pod)))
	}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			return hostPathGroup + sc, err
		}
	}
	return sc, err
}

func fsUserWord(u *int64) string {
	if u == nil {
		return "none"
	}
	return fmt.Sprint(*u)
}

// fsUserSidecar is the uid of the container a probe pod adds so that its FsUser is none: any uid
// but the probe container's 0 makes v1.37 FsUserFrom find two (pkg/volume/util).
const fsUserSidecar int64 = 65532

// shapeFsUser gives probe pod p, which holds the volumes of casePod, casePod's FsUser when they
// project a serviceAccountToken (docs/spec.md [atomicwriter.token]: the kubelet makes it the
// token's owner): none, with a second container of another uid; 0, as the probe container runs;
// another uid, with the probe container running as it (then it probes as that user only:
// settable). Other volumes do not read the FsUser.
func shapeFsUser(p, casePod *corev1.Pod) {
	if !needs.HasTokenProjection(casePod) {
		return
	}
	probe := &p.Spec.Containers[0]
	switch u := atomicwriter.FsUserFrom(casePod); {
	case u == nil:
		side := *probe.DeepCopy()
		side.Name = "fsuser-none"
		side.VolumeMounts = nil
		side.SecurityContext.RunAsUser = ptrTo(fsUserSidecar)
		side.SecurityContext.RunAsGroup = ptrTo(fsUserSidecar)
		p.Spec.Containers = append(p.Spec.Containers, side)
	case *u != 0:
		probe.SecurityContext.RunAsUser = ptrTo(*u)
		probe.SecurityContext.RunAsGroup = ptrTo(*u)
	}
}

func ptrTo[T any](v T) *T { return &v }

// hostPathGroup begins the group of a case with a hostPath volume. A hostPath that fails its
// type check keeps the whole pod from running, so hostPath cases share pods with each other
// only, and a pod of them that does not run is split (runSharedHostPath): the cases whose
// volumes failed have their answer (the FailedMount texts), the others run again in a new pod.
const hostPathGroup = "hostPath "

// hostPathPodVolumes bounds the volumes of a pod of hostPath cases: the kubelet's event recorder
// (client-go tools/record EventAggregator, maxEvents 10) turns the 11th and later FailedMount
// events of one pod with a new message into one "(combined from similar events)" event, so a
// pod with more failing volumes shows only ten of them (seen: ten a round, four rounds for 64).
const hostPathPodVolumes = 10

// podVolumes is the most volumes a probe pod of group g holds (packPods), batch the target's.
func podVolumes(batch int) func(g string) int {
	return func(g string) int {
		if strings.HasPrefix(g, hostPathGroup) {
			return min(batch, hostPathPodVolumes)
		}
		return batch
	}
}

// packPods is the pod-packing plan: the cases, in order, with their podGroup and number of
// volumes, go into probe pods. A case joins the pod last opened for its group while that pod
// then holds at most max(group) volumes; otherwise it opens a pod. A case of group "" opens a pod
// of its own. The answer lists each pod's cases (indexes into groups), in the order the pods
// opened.
func packPods(groups []string, volumes []int, max func(group string) int) [][]int {
	var pods [][]int
	size := []int{}
	open := map[string]int{}
	for i, g := range groups {
		p, ok := open[g]
		if g == "" || !ok || size[p]+volumes[i] > max(g) {
			p = len(pods)
			pods = append(pods, nil)
			size = append(size, 0)
			if g != "" {
				open[g] = p
			}
		}
		pods[p] = append(pods[p], i)
		size[p] += volumes[i]
	}
	return pods
}

// plan puts the admitted cases' volumes into probe pods named prefix-N (packPods), each volume
// under a name unique in the batch, and gives each hostPath case a root of its own on the node.
func (t *Target) plan(runs []*caseRun, ns, prefix string) ([]*probePod, error) {
	t.mu.Lock()
	podPerCase := t.opts.PodPerCase
	t.mu.Unlock()
	var (
		admitted []*caseRun
		groups   []string
		volumes  []int
	)
	for _, r := range runs {
		if r.pod == nil || r.err != nil {
			continue
		}
		g, err := podGroup(r.c, r.pod, podPerCase)
		if err != nil {
			return nil, err
		}
		admitted = append(admitted, r)
		groups = append(groups, g)
		volumes = append(volumes, len(r.pod.Spec.Volumes))
	}
	var pods []*probePod
	for n, members := range packPods(groups, volumes, podVolumes(t.opts.BatchVolumes)) {
		p := &probePod{name: fmt.Sprintf("%s-%d", prefix, n), setUp: map[string]string{}, hostPath: strings.HasPrefix(groups[members[0]], hostPathGroup)}
		p.pod = t.probePodSpec(p.name, ns, admitted[members[0]].pod.Spec.SecurityContext)
		if framework.InUserNamespace(admitted[members[0]].pod) {
			p.pod.Spec.HostUsers, p.userNamespace = ptrTo(false), true
		}
		shapeFsUser(p.pod, admitted[members[0]].pod)
		for _, m := range members {
			if err := p.add(admitted[m], ns); err != nil {
				return nil, err
			}
		}
		if r := admitted[members[0]]; framework.HasContainerProbes(r.c) {
			// One case per such pod (podGroup): its container's ids.
			withSelf(p.pod, r.pod)
			p.self = true
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// add puts r's volumes into p under unique names (c<case>-v<volume>), with the case's hostPath
// paths under its root on the node (r.host: HostRoot/NAMESPACE/CASE unless already chosen), its flexVolume storage in the driver's options and its
// sources renamed to its own copies, and points r's probes at the unique names.
func (p *probePod) add(r *caseRun, ns string) error {
	i := r.id
	for _, v := range r.pod.Spec.Volumes {
		if v.HostPath != nil && r.host == "" {
			r.host = path.Join(HostRoot, ns, fmt.Sprint(i))
		}
	}
	p.runs = append(p.runs, r)
	names := map[string]string{}
	for vi, v := range r.pod.Spec.Volumes {
		u := fmt.Sprintf("c%d-v%d", i, vi)
		names[v.Name] = u
		bv := batchVolume{run: r, index: vi, unique: u}
		r.vols = append(r.vols, bv)
		p.vols = append(p.vols, bv)
		v = *v.DeepCopy()
		v.Name = u
		if v.HostPath != nil {
			v.HostPath.Path = path.Join(r.host, v.HostPath.Path)
		}
		if v.Image != nil && v.Image.Reference == framework.ProbeImage {
			// The probe image as this cluster has it loaded (docs/spec.md [mounts.image-volume]).
			v.Image.Reference = p.pod.Spec.Containers[0].Image
		}
		if v.FlexVolume != nil && v.FlexVolume.Driver == fixturedriver.Driver {
			// The driver reads the volume's storage from its options (fixturedriver.Main).
			storage, err := json.Marshal(r.c.Storage[r.pod.Spec.Volumes[vi].Name])
			if err != nil {
				return err
			}
			if v.FlexVolume.Options == nil {
				v.FlexVolume.Options = map[string]string{}
			}
			v.FlexVolume.Options[fixturedriver.StorageOption] = string(storage)
			p.flex = true
		}
		r.renameSources(&v.VolumeSource)
		p.pod.Spec.Volumes = append(p.pod.Spec.Volumes, v)
		// The probes act through the case's first mount of the volume (docs/spec.md
		// [probes.read-only]): its readOnly; the kubelet adds its own (mustMountRO).
		m, _ := framework.ProbeMount(r.pod, r.pod.Spec.Volumes[vi].Name)
		p.pod.Spec.Containers[0].VolumeMounts = append(p.pod.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: u, MountPath: "/volumes/" + u, ReadOnly: m.ReadOnly, RecursiveReadOnly: m.RecursiveReadOnly, BindMountOptions: m.BindMountOptions})
		if m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
			p.mayRefuse = true
		}
	}
	for _, pr := range r.c.Probes {
		pr.Volume = names[pr.Volume]
		r.probes = append(r.probes, pr)
	}
	p.mirrorNested(r, names)
	return nil
}

// nestedAtomic reports whether a container of pod mounts a volume below where it mounts a secret,
// configMap, downwardAPI or projected volume, or mounts one at a relative path that climbs out:
// the kubelet makes that mount point in the outer volume, or refuses the place (docs/spec.md
// [atomicwriter.nested]).
func nestedAtomic(pod *corev1.Pod) bool {
	atomic := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		atomic[v.Name] = v.Secret != nil || v.ConfigMap != nil || v.DownwardAPI != nil || v.Projected != nil
	}
	for _, c := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, outer := range c.VolumeMounts {
			if atomic[outer.Name] && strings.HasPrefix(outer.MountPath, "../") {
				return true // the kubelet refuses the place (getNestedMountpoints)
			}
			for _, m := range c.VolumeMounts {
				if atomic[outer.Name] && strings.HasPrefix(path.Clean(m.MountPath), path.Clean(outer.MountPath)+"/") {
					return true
				}
			}
		}
	}
	return false
}

// mirrorNested gives p, for a case whose containers nest mounts below an AtomicWriter volume, a
// waiting container per case container with its volumeMounts under the volumes' names in p:
// v1.37 MakeNestedMountpoints reads the pod's containers, and the probe container mounts every
// volume apart (/volumes/NAME), where the outer volume shows the mount point made in it. A case
// whose mounts carry bindMountOptions gets the same: the kubelet's declared-features admission
// reads every container's mounts (docs/spec.md [mounts.bind-mount-options]).
func (p *probePod) mirrorNested(r *caseRun, names map[string]string) {
	if !nestedAtomic(r.pod) && !framework.UsesBindMountOptions(r.pod) {
		return
	}
	probe := p.pod.Spec.Containers[0]
	for i, c := range slices.Concat(r.pod.Spec.InitContainers, r.pod.Spec.Containers) {
		m := *probe.DeepCopy()
		m.Name = fmt.Sprintf("c%d-mounts-%d", r.id, i)
		m.VolumeMounts = nil
		for _, vm := range c.VolumeMounts {
			vm.Name = names[vm.Name]
			m.VolumeMounts = append(m.VolumeMounts, vm)
		}
		p.pod.Spec.Containers = append(p.pod.Spec.Containers, m)
	}
}

// missingKey reports whether a secret or configMap (or a projection of one) of pod selects a key
// that the case's source does not have without being optional: v1.37 MakePayload fails that
// volume's set-up, and the kubelet never starts the pod holding it.
func missingKey(c *framework.Case, pod *corev1.Pod) bool {
	lacks := func(object string, items []corev1.KeyToPath, optional *bool) bool {
		if optional != nil && *optional {
			return false
		}
		data, ok := c.Sources[object]
		if !ok {
			return true
		}
		for _, it := range items {
			if _, ok := data[it.Key]; !ok {
				return true
			}
		}
		return false
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil:
			if lacks("secret/"+v.Secret.SecretName, v.Secret.Items, v.Secret.Optional) {
				return true
			}
		case v.ConfigMap != nil:
			if lacks("configmap/"+v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional) {
				return true
			}
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.Secret != nil && lacks("secret/"+src.Secret.Name, src.Secret.Items, src.Secret.Optional) ||
					src.ConfigMap != nil && lacks("configmap/"+src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional) {
					return true
				}
			}
		}
	}
	return false
}

// asksRROEnabled: a probe mount of pod (framework.ProbeMount) sets recursiveReadOnly Enabled.
func asksRROEnabled(pod *corev1.Pod) bool {
	for _, v := range pod.Spec.Volumes {
		if m, ok := framework.ProbeMount(pod, v.Name); ok && m.RecursiveReadOnly != nil && *m.RecursiveReadOnly == corev1.RecursiveReadOnlyEnabled {
			return true
		}
	}
	return false
}
