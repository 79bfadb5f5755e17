package oracle

import (
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/rule"
)

// Names in an AtomicWriter volume (v1.37 pkg/volume/util/atomic_writer.go dataDirName; the
// timestamp directory as framework/snapshot writes it).
const (
	dataDirName  = "..data"
	timestampDir = "..TIMESTAMP"
	// oldTimestampDir is the previous timestamp dir while an update writes the new one.
	oldTimestampDir = "..TIMESTAMP-old"
)

// setUpAtomicWriter is SetUpAt of the v1.37 secret / configMap / downwardAPI / projected
// plugins: payload first (its errors leave nothing behind), then the wrapped emptyDir, then
// AtomicWriter.Write with setPerms = the ownership walk (read-only mask) over the whole volume.
func (k *kubelet) setUpAtomicWriter(v *volume) string {
	// atomic_writer.go Write: an unchanged payload writes nothing and calls no setPerms;
	// the wrapped emptyDir is ready. The Case's sources never change, so nothing happens.
	kind := cond(rule.Type, v.typ)
	g := k.fsGroup()
	if v.ready {
		k.tr.hit(rule.AtomicUnchanged, kind, k.fsGroupCond())
		k.traceOwners(v, nil)
		return ok
	}
	payload, err := k.payload(&v.spec.VolumeSource)
	if v.spec.DownwardAPI == nil {
		k.tr.hit(rule.AtomicSources, kind, cond(rule.Outcome, setOr(err == nil, "ok", "error")))
	}
	if err != nil {
		return err.Error()
	}
	k.tr.hit(rule.AtomicRoot, kind)
	k.tr.hit(rule.AtomicLayout, append(modeFrom(&v.spec.VolumeSource), kind)...)
	k.traceOwners(v, payload)
	// secret.go / downwardapi.go / projected.go wrappedVolumeSpec: emptyDir on Memory;
	// configmap.go wrappedVolumeSpec: emptyDir on the default medium. Mode nil.
	medium := corev1.StorageMediumMemory
	if v.spec.ConfigMap != nil {
		medium = corev1.StorageMediumDefault
	}
	root, _ := k.emptyDirRoot(medium, nil)
	// The wrapped emptyDir's own SetUpAt walks its (still empty) root with the rw mask
	// (empty_dir.go SetUpAt, the mounterArgs carry fsGroup).
	if g != nil {
		k.walk(v, root, *g, false)
	}
	// [atomicwriter.nested] MakeNestedMountpoints, after the wrapped set-up, before the write
	// (whose setPerms walk then meets them).
	nested, err := nestedMountpoints(v.spec.Name, k.pod)
	if err != nil {
		return err.Error()
	}
	if len(nested) > 0 {
		k.tr.hit(rule.AtomicNested, kind, k.fsGroupCond())
		makeNested(root, nested)
	}
	// seed 002 "Proposed heuristics" Case 2: preservePermissions (kubelet gate on) skips
	// SetVolumeOwnership, i.e. the AtomicWriter setPerms walk.
	walk := g != nil && !(k.preserve[v.spec.Name] && gateOn(k.gates, framework.GatePreservePermissions))
	if g != nil {
		preserve := "none"
		if k.preserve[v.spec.Name] {
			preserve = "field-gate-" + onOff(gateOn(k.gates, framework.GatePreservePermissions))
		}
		k.tr.hit(rule.AtomicFSGroup, kind, cond(rule.Preserve, preserve), gateSource(k.gates, framework.GatePreservePermissions))
	}
	writeAtomic(root, payload, func() {
		if walk {
			// secret.go SetUpAt setPerms: NewVolumeOwnership(b, dir, fsGroup, nil), ReadOnly attributes.
			k.walk(v, root, *g, true)
		}
	})
	v.root, v.top = root, root
	v.ready = true
	v.written = payload
	return ok
}

// syncAtomicWriter is [steps.update-sources] for one AtomicWriter volume: SetUpAt again with
// the sources as they are now. The payload's errors fail the SetUp and leave the volume as it
// was; atomic_writer.go Write writes a new timestamp dir only when a path was added or removed
// or a content changed (shouldWritePayload, pathsToRemove), with the owners the kubelet's
// gates give now, and calls setPerms (the walk) again.
func (k *kubelet) syncAtomicWriter(v *volume) string {
	kind := cond(rule.Type, v.typ)
	k.tr.hit(rule.StepUpdateSources, kind)
	payload, err := k.payload(&v.spec.VolumeSource)
	if err != nil {
		return err.Error()
	}
	if samePayload(v.written, payload) {
		k.tr.hit(rule.AtomicUnchanged, kind, k.fsGroupCond())
		return ok
	}
	k.traceOwners(v, payload)
	g := k.fsGroup()
	walk := g != nil && !(k.preserve[v.spec.Name] && gateOn(k.gates, framework.GatePreservePermissions))
	writeAtomic(v.root, payload, func() {
		if walk {
			k.walk(v, v.root, *g, true)
		}
	})
	v.written = payload
	return ok
}

// samePayload is shouldWritePayload and pathsToRemove both saying no: the same paths with the
// same contents (modes and owners are not compared).
func samePayload(old, now map[string]fileSpec) bool {
	if len(old) != len(now) {
		return false
	}
	for p, f := range now {
		if o, ok := old[p]; !ok || o.data != f.data {
			return false
		}
	}
	return true
}

// fileSpec is one file of a payload: its exact mode and its owner (KEP-5936; nil: root's).
type fileSpec struct {
	mode  uint32
	owner *int64
	// from is rule.UserFrom: what decided the owner.
	from string
	// data stands for the file's content: a source key's value; a downwardAPI item's field and
	// a token do not change while the pod runs.
	data string
}

// writeAtomic is atomic_writer.go Write: the timestamp dir (MkdirTemp, then chmod 0755), the
// payload inside it (parents MkdirAll 0777 under umask, files with their exact mode, then
// their owner), setPerms, then a new ..data symlink (symlink, then rename over the old one),
// one symlink per top-level name that has none yet (owned by its first file's owner), the
// removal of the top-level names the payload no longer has and of the old timestamp dir.
// Entries made after setPerms take the root's group when the walk left the root setgid (Linux
// setgid directory rule).
func writeAtomic(root *node, payload map[string]fileSpec, setPerms func()) {
	old := root.kids[timestampDir]
	if old != nil {
		delete(root.kids, timestampDir)
		root.kids[oldTimestampDir] = old
	}
	ts := root.add(timestampDir, typeDir, 0700, kubeletOwner)
	ts.mode = 0755 // newTimestampDir: os.Chmod(tsDir, 0755) also clears an inherited setgid
	paths := make([]string, 0, len(payload))
	for p := range payload {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	top := map[string]bool{}
	// topOwner is the owner of each top-level name's symlink: createUserVisibleFiles lchowns
	// the link it creates to the owner of the payload entry that made it; upstream meets the
	// entries in map order, the model in sorted order (docs/spec.md [atomicwriter.owner]).
	topOwner := map[string]*int64{}
	for _, p := range paths {
		comps := strings.Split(p, "/")
		if !top[comps[0]] {
			topOwner[comps[0]] = payload[p].owner
		}
		top[comps[0]] = true
		d := ts
		for _, c := range comps[:len(comps)-1] {
			if d.kids[c] == nil {
				d.add(c, typeDir, 0777&^umask, kubeletOwner) // writePayloadToDir: os.MkdirAll(baseDir, os.ModePerm)
			}
			d = d.kids[c]
		}
		f := d.add(comps[len(comps)-1], typeFile, payload[p].mode&^umask, kubeletOwner)
		f.mode = payload[p].mode // writePayloadToDir: os.Chmod(fullPath, mode)
		if o := payload[p].owner; o != nil {
			f.uid = *o // writePayloadToDir: lchown(fullPath, FsUser, -1) after the chmod
		}
	}
	// atomic_writer.go Write: setPerms(tsDirName) runs before ..data and the user-visible symlinks.
	setPerms()
	delete(root.kids, dataDirName)
	root.add(dataDirName, typeSymlink, 0777, kubeletOwner).link = timestampDir
	for _, name := range sortedKeys(top) {
		if root.kids[name] != nil {
			continue // createUserVisibleFiles: only the links missing are made
		}
		// createUserVisibleFiles: name -> ..data/name for each top-level element.
		l := root.add(name, typeSymlink, 0777, kubeletOwner)
		l.link = path.Join(dataDirName, name)
		if o := topOwner[name]; o != nil {
			l.uid = *o // createUserVisibleFiles: lchown(visibleFile, FsUser, -1)
		}
	}
	if old != nil {
		// removeUserVisiblePaths: the top-level names of the old data that the new one lacks.
		for name := range old.kids {
			if !top[name] {
				delete(root.kids, name)
			}
		}
		delete(root.kids, oldTimestampDir)
	}
}

// payload is the plugins' MakePayload / CollectData / collectData: path -> file mode and owner.
func (k *kubelet) payload(s *corev1.VolumeSource) (map[string]fileSpec, error) {
	out := map[string]fileSpec{}
	users := gateOn(k.gates, framework.GateAtomicWriteVolumeUserFields)
	switch {
	case s.Secret != nil:
		err := k.keyPayload(out, "secret/"+s.Secret.SecretName, s.Secret.Items, *s.Secret.DefaultMode, s.Secret.DefaultUser, optional(s.Secret.Optional), secretKeyMissing)
		return out, err
	case s.ConfigMap != nil:
		err := k.keyPayload(out, "configmap/"+s.ConfigMap.Name, s.ConfigMap.Items, *s.ConfigMap.DefaultMode, s.ConfigMap.DefaultUser, optional(s.ConfigMap.Optional), configMapKeyMissing)
		return out, err
	case s.DownwardAPI != nil:
		downwardPayload(out, s.DownwardAPI.Items, *s.DownwardAPI.DefaultMode, s.DownwardAPI.DefaultUser, users)
		return out, nil
	}
	// projected.go collectData: every source's errors, aggregated.
	p := s.Projected
	var errs []error
	for _, src := range p.Sources {
		switch {
		case src.Secret != nil:
			errs = appendErr(errs, k.keyPayload(out, "secret/"+src.Secret.Name, src.Secret.Items, *p.DefaultMode, p.DefaultUser, optional(src.Secret.Optional), secretKeyMissing))
		case src.ConfigMap != nil:
			errs = appendErr(errs, k.keyPayload(out, "configmap/"+src.ConfigMap.Name, src.ConfigMap.Items, *p.DefaultMode, p.DefaultUser, optional(src.ConfigMap.Optional), configMapKeyMissing))
		case src.DownwardAPI != nil:
			downwardPayload(out, src.DownwardAPI.Items, *p.DefaultMode, p.DefaultUser, users)
		case src.ServiceAccountToken != nil:
			k.credential(out, p, "serviceAccountToken", src.ServiceAccountToken.User, src.ServiceAccountToken.Path)
		case src.ClusterTrustBundle != nil:
			k.credential(out, p, "clusterTrustBundle", src.ClusterTrustBundle.User, src.ClusterTrustBundle.Path)
		case src.PodCertificate != nil:
			c := src.PodCertificate
			k.credential(out, p, "podCertificate", c.User, c.CredentialBundlePath, c.KeyPath, c.CertificateChainPath)
		}
	}
	return out, utilerrors.NewAggregate(errs)
}

// credential is the serviceAccountToken, clusterTrustBundle and podCertificate cases of v1.37
// projected.go collectData ([atomicwriter.token], [atomicwriter.token-owner]): each file's owner
// is resolveFsUser(mounterArgs.FsUser, defaultUser, the source's user), and its mode defaultMode,
// or 0600 when it has an owner or fsGroup is set (SetVolumeOwnership then makes it 0640). paths
// are the source's files ("" is a podCertificate file not asked for).
func (k *kubelet) credential(out map[string]fileSpec, p *corev1.ProjectedVolumeSource, source string, user *int64, paths ...string) {
	users := gateOn(k.gates, framework.GateAtomicWriteVolumeUserFields)
	fsUser, shape := fsUserOf(k.pod)
	owner, from := resolveFsUser(fsUser, users, p.DefaultUser, user)
	k.tr.hit(rule.AtomicToken, cond(rule.Projection, source), cond(rule.FsUser, shape), k.fsGroupCond())
	if users || user != nil || p.DefaultUser != nil {
		k.tr.hit(rule.AtomicTokenUser, cond(rule.UserFrom, from), cond(rule.Gate, onOff(users)), k.fsGroupCond())
	}
	mode := uint32(*p.DefaultMode)
	if owner != nil || k.fsGroup() != nil {
		mode = 0600
	}
	for _, f := range paths {
		if f != "" {
			out[path.Clean(f)] = fileSpec{mode: mode, owner: owner, from: from}
		}
	}
}

// Texts of a missing key (v1.37 secret.go MakePayload, configmap.go MakePayload).
func secretKeyMissing(key string) error {
	return fmt.Errorf("references non-existent secret key: %s", key)
}
func configMapKeyMissing(key string) error {
	return fmt.Errorf("configmap references non-existent config key: %s", key)
}

// keyPayload is secret.go / configmap.go MakePayload over Case.Sources[object] ("secret/NAME",
// "configmap/NAME"). An object the Case does not give is absent: [atomicwriter.sources] the
// volume fails with the kubelet's NotFound (v1.37 watch_based_manager.go objectCache.Get, the
// resource singular: `secret "x" not found`), unless the reference is optional (an empty object).
func (k *kubelet) keyPayload(out map[string]fileSpec, object string, items []corev1.KeyToPath, defaultMode int32, defaultUser *int64, optional bool, missing func(string) error) error {
	data, found := k.sources[object]
	if !found && !optional {
		kind, name, _ := strings.Cut(object, "/")
		return fmt.Errorf("%s %q not found", kind, name)
	}
	users := gateOn(k.gates, framework.GateAtomicWriteVolumeUserFields)
	if len(items) == 0 {
		// MakePayload: every key with defaultMode and, gate on, defaultUser.
		for key, content := range data {
			out[path.Clean(key)] = fileSpec{mode: uint32(defaultMode), owner: fileOwner(users, defaultUser, nil), from: ownerFrom(users, defaultUser, nil, userFromItem), data: content}
		}
		return nil
	}
	for _, it := range items {
		if _, found := data[it.Key]; !found {
			if optional {
				continue
			}
			return missing(it.Key)
		}
		mode := defaultMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		out[path.Clean(it.Path)] = fileSpec{mode: uint32(mode), owner: fileOwner(users, defaultUser, it.User), from: ownerFrom(users, defaultUser, it.User, userFromItem), data: data[it.Key]}
	}
	return nil
}

// downwardPayload is downwardapi.go CollectData's modes and owners: item mode, else
// defaultMode; ResolvesFsUser(defaultUser, item user).
func downwardPayload(out map[string]fileSpec, items []corev1.DownwardAPIVolumeFile, defaultMode int32, defaultUser *int64, users bool) {
	for _, it := range items {
		mode := defaultMode
		if it.Mode != nil {
			mode = *it.Mode
		}
		out[path.Clean(it.Path)] = fileSpec{mode: uint32(mode), owner: fileOwner(users, defaultUser, it.User), from: ownerFrom(users, defaultUser, it.User, userFromItem)}
	}
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

func optional(b *bool) bool { return b != nil && *b }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
