package catalogue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// nestedMountCases: [atomicwriter.nested] a volume mounted below an AtomicWriter volume's mount
// path gets its mount point made in that volume (v1.37 pkg/volume/util MakeNestedMountpoints):
// per container, only the mounts directly below, relative mount paths that climb out refused.
func nestedMountCases() []*framework.Case {
	type mount struct{ vol, at string }
	container := func(name string, mounts ...mount) corev1.Container {
		c := corev1.Container{Name: name, Image: "volperm/probe"}
		for _, m := range mounts {
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: m.vol, MountPath: m.at})
		}
		return c
	}
	outer := map[string]corev1.VolumeSource{
		"secret":      {Secret: &corev1.SecretVolumeSource{SecretName: "app"}},
		"configMap":   {ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
		"downwardAPI": {DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}}},
		"projected": {Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}},
	}
	sources := map[string]map[string]string{"secret/app": {"config": "x"}, "configmap/app": {"config": "x"}}
	emptyDir := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	build := func(name, desc, typ string, fsg bool, after []framework.Step, extra []corev1.Volume, inits []corev1.Container, containers ...corev1.Container) *framework.Case {
		pod := podOf(append([]corev1.Volume{volume("app", outer[typ])}, extra...)...)
		pod.Spec.InitContainers = inits
		pod.Spec.Containers = containers
		if fsg {
			withFSGroup(pod, fsGroup)
		}
		return &framework.Case{Name: name, Area: framework.AreaAtomicWriter, Profile: framework.ProfileConformance,
			Description: desc, Pod: pod, Sources: sources, After: after}
	}
	cache := []corev1.Volume{volume("cache", emptyDir)}
	var out []*framework.Case
	for _, typ := range []string{"secret", "configMap", "downwardAPI", "projected"} {
		out = append(out,
			build(fmt.Sprintf("%s volume with an emptyDir mounted below it gets the mount point cache (0755, root's)", typ),
				"MakeNestedMountpoints: os.MkdirAll(cache, 0755) in the volume, after the wrapped emptyDir and before the write (docs/spec.md [atomicwriter.nested]).",
				typ, false, nil, cache, nil, container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/cache"})),
			build(fmt.Sprintf("%s volume with an emptyDir mounted below it, fsGroup %d: the mount point is walked (2755, group fsGroup)", typ, fsGroup),
				"the mount point exists when the write's setPerms walks the volume with the read-only mask: 0755|0440|0110 and setgid (docs/spec.md [atomicwriter.nested], [atomicwriter.fsgroup]).",
				typ, true, nil, cache, nil, container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/cache"})),
		)
	}
	out = append(out,
		runtimeDefined(build("secret volume with emptyDirs at cache and cache/deep below it gets cache only",
			"a mount point below another nested one is that one's business (getNestedMountpoints prevNestedMPs; docs/spec.md [atomicwriter.nested]). "+
				"The kubelet makes no deep in the emptyDir cache; a runtime starting the container does (runc makes a missing mount target): runtime-defined there.",
			"secret", false, nil, []corev1.Volume{volume("cache", emptyDir), volume("deep", emptyDir)}, nil,
			container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/cache"}, mount{"deep", "/etc/app/cache/deep"}))),
		build("secret volume with an emptyDir mounted two levels below it gets a and a/b",
			"MkdirAll makes every missing parent, each 0755 (docs/spec.md [atomicwriter.nested]).",
			"secret", false, nil, cache, nil, container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/a/b"})),
		build("secret volume at /etc/app and an emptyDir at /etc/apple: not nested",
			"a mount path that only begins with the same letters is not below it (docs/spec.md [atomicwriter.nested]).",
			"secret", false, nil, cache, nil, container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/apple"})),
		build("secret volume in one container and an emptyDir below its path in another: not nested",
			"each container's mounts are compared among themselves only (docs/spec.md [atomicwriter.nested]).",
			"secret", false, nil, cache, nil, container("app", mount{"app", "/etc/app"}), container("sidecar", mount{"cache", "/etc/app/cache"})),
		build("secret volume with an emptyDir mounted below it in an init container gets the mount point",
			"init containers count (podutil.VisitContainers; docs/spec.md [atomicwriter.nested]).",
			"secret", false, nil, cache, []corev1.Container{container("init", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/cache"})}, container("app")),
		build("secret volume with a key named like the nested mount point keeps the directory",
			"the write's visible link `config` is not made over an existing entry: the mount point stays a directory, the key's file is in ..data only (createUserVisibleFiles; docs/spec.md [atomicwriter.nested]).",
			"secret", false, nil, cache, nil, container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/config"})),
		build("secret volume with an emptyDir mounted below it keeps the mount point after a kubelet restart",
			"SetUp again: MkdirAll of an existing directory changes nothing (docs/spec.md [atomicwriter.nested], [atomicwriter.unchanged]).",
			"secret", true, []framework.Step{restart}, cache, nil, container("app", mount{"app", "/etc/app"}, mount{"cache", "/etc/app/cache"})),
		build("secret volume mounted at the relative path ../app fails: invalid container mount point",
			"getNestedMountpoints refuses a mount point that climbs out of the container's root; the API allows relative mount paths (docs/spec.md [atomicwriter.nested]).",
			"secret", false, nil, nil, nil, container("app", mount{"app", "../app"})),
	)
	return out
}

// runtimeDefined labels c whose observation on a node with a runtime includes what the runtime
// makes when it starts the pod's containers (hostpath.go LabelRuntimeDefined).
func runtimeDefined(c *framework.Case) *framework.Case {
	c.Labels = append(c.Labels, LabelRuntimeDefined)
	return c
}
