package oracle

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// tracer collects the rules the oracle applies to one case, with their conditions
// (framework/rule, docs/coverage.md). A nil tracer records nothing: Expect runs without one.
type tracer struct {
	hits []rule.Hit
}

// hit records that rule id was applied under conds.
func (t *tracer) hit(id rule.ID, conds ...rule.Cond) {
	if t == nil {
		return
	}
	t.hits = append(t.hits, rule.Hit{Rule: id, Conds: conds})
}

func cond(d rule.Dim, v string) rule.Cond { return rule.Cond{Dim: d, Value: v} }

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func setOr(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// gateConds are the state of gate name in gates and whether the case set it.
func gateConds(gates map[string]bool, name string) []rule.Cond {
	return []rule.Cond{cond(rule.Gate, onOff(gateOn(gates, name))), gateSource(gates, name)}
}

// gateSource is rule.GateSource: whether gate name is set in gates or left at its default.
func gateSource(gates map[string]bool, name string) rule.Cond {
	_, set := gates[name]
	return cond(rule.GateSource, setOr(set, "set", "default"))
}

// fsGroupCond is rule.FSGroup for the pod.
func (k *kubelet) fsGroupCond() rule.Cond {
	return cond(rule.FSGroup, setOr(k.fsGroup() != nil, "set", "unset"))
}

// mediumOf is rule.Medium's value for an emptyDir medium ("" for an unknown one).
func mediumOf(m corev1.StorageMedium) string {
	switch {
	case m == corev1.StorageMediumDefault:
		return "default"
	case m == corev1.StorageMediumMemory:
		return "Memory"
	case isHugePageMedium(m):
		return "HugePages"
	}
	return ""
}

// volumeMedium is the medium a volume's root lives on: its own (emptyDir) or its wrapped
// emptyDir's (AtomicWriter volumes); "" for the others.
func volumeMedium(s *corev1.VolumeSource) string {
	switch {
	case s.EmptyDir != nil:
		return mediumOf(s.EmptyDir.Medium)
	case s.ConfigMap != nil:
		return "default"
	case atomicWriterKind(s) != "":
		return "Memory"
	}
	return ""
}

// withMedium appends the medium condition when the volume has one.
func withMedium(conds []rule.Cond, s *corev1.VolumeSource) []rule.Cond {
	if m := volumeMedium(s); m != "" {
		conds = append(conds, cond(rule.Medium, m))
	}
	return conds
}

// oldConds is rule.Old: a create, or an update whose old pod did or did not use the field.
func oldConds(old *corev1.Pod, inUse bool) rule.Cond {
	switch {
	case old == nil:
		return cond(rule.Old, "create")
	case inUse:
		return cond(rule.Old, "update-in-use")
	}
	return cond(rule.Old, "update-not-in-use")
}

// traceDefaulting records the defaulting rules a pod's volumes meet (before defaultPodVolumes).
func (t *tracer) traceDefaulting(pod *corev1.Pod) {
	if t == nil {
		return
	}
	for i := range pod.Spec.Volumes {
		s := &pod.Spec.Volumes[i].VolumeSource
		switch {
		case sourceOf(s) == nil:
			t.hit(rule.DefaultNoSource)
		case s.HostPath != nil && s.HostPath.Type == nil:
			t.hit(rule.DefaultHostPath, cond(rule.Object, "pod"))
		case s.Secret != nil && s.Secret.DefaultMode == nil,
			s.ConfigMap != nil && s.ConfigMap.DefaultMode == nil,
			s.DownwardAPI != nil && s.DownwardAPI.DefaultMode == nil,
			s.Projected != nil && s.Projected.DefaultMode == nil:
			t.hit(rule.DefaultMode, cond(rule.Type, atomicWriterKind(s)))
		}
	}
}

// traceValidation records the validation rules of the (defaulted, dropped) pod's volumes, with
// their boundaries and outcomes taken from errs, the pod's validation errors.
func (t *tracer) traceValidation(pod *corev1.Pod, apiserver map[string]bool, errs field.ErrorList) {
	if t == nil {
		return
	}
	vols := field.NewPath("spec", "volumes")
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		at := vols.Index(i).String()
		failed := func(suffix string) string {
			for _, e := range errs {
				if strings.HasPrefix(e.Field, at+suffix) {
					return "error"
				}
			}
			return "ok"
		}
		// The volume's own name and source count: errors at spec.volumes[i] or its .name.
		out := "ok"
		for _, e := range errs {
			if e.Field == at || e.Field == at+".name" {
				out = "error"
			}
		}
		t.hit(rule.ValidVolumes, cond(rule.Outcome, out))
		s := &v.VolumeSource
		switch {
		case s.EmptyDir != nil && s.EmptyDir.Mode != nil:
			t.hit(rule.ValidEmptyDirMode, cond(rule.Boundary, rule.BoundaryOf(int64(*s.EmptyDir.Mode), 0, 01777)),
				cond(rule.Gate, onOff(gateOn(apiserver, framework.GateEmptyDirVolumeMode))))
		case s.HostPath != nil:
			conds := []rule.Cond{cond(rule.Outcome, failed(".hostPath"))}
			if ht := hostTypeValue(s.HostPath.Type); ht != "" {
				conds = append(conds, cond(rule.HostType, ht))
			}
			t.hit(rule.ValidHostPath, conds...)
		case s.FlexVolume != nil:
			t.hit(rule.ValidFlexDriver, cond(rule.Outcome, failed(".flexVolume.driver")))
		case s.Image != nil:
			t.hit(rule.ValidImage, cond(rule.Outcome, failed(".image")))
		}
		if s.Projected != nil {
			for si, src := range s.Projected.Sources {
				if src.ServiceAccountToken != nil {
					t.hit(rule.ValidTokenSA, cond(rule.Outcome, failed(fmt.Sprintf(".projected.sources[%d].serviceAccountToken", si))))
				}
			}
		}
		if kind := atomicWriterKind(s); kind != "" {
			for _, f := range setUserFields([]corev1.Volume{*v}) {
				t.hit(rule.ValidUser, cond(rule.Boundary, rule.BoundaryOf(**f.ptr, 0, maxUserID)),
					cond(rule.Type, kind), cond(rule.UserFrom, f.from))
			}
			for _, m := range fileModes(s) {
				t.hit(rule.ValidFileMode, cond(rule.Boundary, rule.BoundaryOf(int64(*m.mode), 0, 0777)),
					cond(rule.Type, kind), cond(rule.ModeFrom, m.from))
			}
		}
	}
}

// fileMode is one mode of an AtomicWriter volume's spec and where it comes from.
type fileMode struct {
	mode *int32
	from string
}

// fileModes lists the defaultMode and every item mode set on an AtomicWriter source.
func fileModes(s *corev1.VolumeSource) []fileMode {
	var out []fileMode
	if dm := defaultModeOf(s); dm != nil {
		out = append(out, fileMode{dm, "defaultMode"})
	}
	items, _ := itemModes(s)
	for _, m := range items {
		if m != nil {
			out = append(out, fileMode{m, "item"})
		}
	}
	return out
}

// defaultModeOf is an AtomicWriter source's defaultMode.
func defaultModeOf(s *corev1.VolumeSource) *int32 {
	switch {
	case s.Secret != nil:
		return s.Secret.DefaultMode
	case s.ConfigMap != nil:
		return s.ConfigMap.DefaultMode
	case s.DownwardAPI != nil:
		return s.DownwardAPI.DefaultMode
	case s.Projected != nil:
		return s.Projected.DefaultMode
	}
	return nil
}

// itemModes lists the mode of every item of an AtomicWriter source (nil for an item without
// one), and whether a part of it projects whole (a secret or configMap without items, a token),
// whose files take defaultMode.
func itemModes(s *corev1.VolumeSource) (modes []*int32, whole bool) {
	keys := func(items []corev1.KeyToPath) {
		whole = whole || len(items) == 0
		for i := range items {
			modes = append(modes, items[i].Mode)
		}
	}
	files := func(items []corev1.DownwardAPIVolumeFile) {
		for i := range items {
			modes = append(modes, items[i].Mode)
		}
	}
	switch {
	case s.Secret != nil:
		keys(s.Secret.Items)
	case s.ConfigMap != nil:
		keys(s.ConfigMap.Items)
	case s.DownwardAPI != nil:
		files(s.DownwardAPI.Items)
	case s.Projected != nil:
		for _, src := range s.Projected.Sources {
			switch {
			case src.Secret != nil:
				keys(src.Secret.Items)
			case src.ConfigMap != nil:
				keys(src.ConfigMap.Items)
			case src.DownwardAPI != nil:
				files(src.DownwardAPI.Items)
			case src.ServiceAccountToken != nil:
				whole = true
			}
		}
	}
	return modes, whole
}

// modeFrom is rule.ModeFrom for a payload: "defaultMode" when a file takes the volume's,
// "item" when an item sets its own (each may hold).
func modeFrom(s *corev1.VolumeSource) []rule.Cond {
	modes, def := itemModes(s)
	item := false
	for _, m := range modes {
		def = def || m == nil
		item = item || m != nil
	}
	var conds []rule.Cond
	if def {
		conds = append(conds, cond(rule.ModeFrom, "defaultMode"))
	}
	if item {
		conds = append(conds, cond(rule.ModeFrom, "item"))
	}
	return conds
}

// hostTypeValue is rule.HostType's value for a hostPath type ("" for an unknown one).
func hostTypeValue(t *corev1.HostPathType) string {
	if t == nil || *t == corev1.HostPathUnset {
		return "unset"
	}
	for _, v := range rule.Values[rule.HostType] {
		if v == string(*t) {
			return v
		}
	}
	return ""
}

// hostCheck is rule.HostCheck's value for checking type t at p on host, before the check runs.
func hostCheck(host *node, p string, t corev1.HostPathType) string {
	ht := hostTypeValue(&t)
	if ht == "unset" {
		return "unset/any"
	}
	want := map[corev1.HostPathType]string{
		corev1.HostPathDirectoryOrCreate: typeDir, corev1.HostPathDirectory: typeDir,
		corev1.HostPathFileOrCreate: typeFile, corev1.HostPathFile: typeFile,
		corev1.HostPathSocket: typeSocket, corev1.HostPathCharDev: typeCharDev, corev1.HostPathBlockDev: typeBlockDev,
	}[t]
	n, _ := stat(host, p)
	switch {
	case n == nil && strings.HasSuffix(ht, "OrCreate"):
		return ht + "/created"
	case n == nil:
		return ht + "/missing"
	case n.typ == want:
		return ht + "/match"
	}
	return ht + "/other-type"
}

// hostPathRoute is rule.Path: how p reaches what is there — directly, through a symlink
// (dangling or not), or through something that is not a directory.
func hostPathRoute(host *node, p string) string {
	comps := splitPath(p)
	link := false
	for i := range comps {
		f, errno := lookup(host, host, strings.Join(comps[:i+1], "/"), false, nil)
		if errno == eNOTDIR {
			return "through-file"
		}
		if errno != "" || f.n == nil {
			break
		}
		if f.n.typ == typeSymlink {
			link = true
		}
	}
	if !link {
		return "direct"
	}
	if n, _ := stat(host, p); n == nil {
		return "dangling-symlink"
	}
	return "symlink"
}

// walkEntries is rule.Entry for every kind of entry a walk from root meets.
func walkEntries(root *node) []rule.Cond {
	seen := map[string]bool{"root": true}
	var visit func(n *node, depth int)
	visit = func(n *node, depth int) {
		for _, name := range n.names() {
			c := n.kids[name]
			switch c.typ {
			case typeDir:
				seen["dir"] = true
			case typeSymlink:
				seen["symlink"] = true
			default:
				seen["file"] = true
			}
			if depth > 0 {
				seen["nested"] = true
			}
			if c.typ != typeSymlink {
				if c.mode&modeSetuid != 0 {
					seen["setuid"] = true
				}
				if c.mode&modeSetgid != 0 {
					seen["setgid"] = true
				}
				if c.mode&modeSticky != 0 {
					seen["sticky"] = true
				}
			}
			if c.uid != 0 {
				seen["other-owner"] = true
			}
			if c.typ == typeDir {
				visit(c, depth+1)
			}
		}
	}
	visit(root, 0)
	var out []rule.Cond
	for _, v := range rule.Values[rule.Entry] {
		if seen[v] {
			out = append(out, cond(rule.Entry, v))
		}
	}
	return out
}

// probeClass is rule.Class: how u relates to n (root, owner, group or other).
func probeClass(n *node, u *prober) string {
	switch {
	case u.UID == 0:
		return "root"
	case n == nil:
		return ""
	case u.UID == n.uid:
		return "owner"
	case inGroup(u, n.gid):
		return "group"
	}
	return "other"
}

// policyValue is rule.Policy for a pod.
func policyValue(pod *corev1.Pod) string {
	if sc := pod.Spec.SecurityContext; sc != nil && sc.FSGroupChangePolicy != nil {
		return string(*sc.FSGroupChangePolicy)
	}
	return "unset"
}

// setUpValue is rule.SetUp for the kubelet's n-th SetUp of every volume (0 is the first).
func setUpValue(n int) rule.Cond {
	return cond(rule.SetUp, setOr(n == 0, "first", "restart"))
}
