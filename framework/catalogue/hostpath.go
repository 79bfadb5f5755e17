package catalogue

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
	caseneeds "github.com/volperm/volperm/framework/needs"
)

// hostPathTypes are the eight values of hostPath.type (seed 001; v1.37 validation's supported values).
var hostPathTypes = []corev1.HostPathType{
	corev1.HostPathUnset, corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory,
	corev1.HostPathFileOrCreate, corev1.HostPathFile, corev1.HostPathSocket,
	corev1.HostPathCharDev, corev1.HostPathBlockDev,
}

// hostObject is what may exist at a hostPath; every kind but nothing is also reached through a symlink.
type hostObject struct {
	kind   framework.ObjectKind
	phrase string
}

var hostObjects = []hostObject{
	{framework.KindNothing, "nothing"},
	{framework.KindDirectory, "a directory"},
	{framework.KindFile, "a file"},
	{framework.KindSocket, "a socket"},
	{framework.KindCharDev, "a char device"},
	{framework.KindBlockDev, "a block device"},
}

// hostPathRoot is where generated hostPath cases put their fixtures (inside the target's host root).
const hostPathRoot = "/var/run/volperm/"

func hostPathCases() []*framework.Case {
	var cases []*framework.Case
	for _, t := range hostPathTypes {
		for _, o := range hostObjects {
			cases = append(cases, hostPathMatrixCase(t, o, false))
			if o.kind != framework.KindNothing {
				cases = append(cases, hostPathMatrixCase(t, o, true))
			}
		}
	}
	return append(append(cases, hostPathMissingParent()...), hostPathValidation()...)
}

func typePhrase(t corev1.HostPathType) string {
	if t == corev1.HostPathUnset {
		return `"" (unset)`
	}
	return string(t)
}

func typeSlug(t corev1.HostPathType) string {
	if t == corev1.HostPathUnset {
		return "unset"
	}
	return strings.ToLower(string(t))
}

func hostPathPod(path string, t *corev1.HostPathType) *corev1.Pod {
	return podOf(volume("host", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: t}}))
}

// LabelRuntimeDefined marks cases whose set-up succeeds with nothing at a hostPath: the node's
// part is done, and what a container sees there is the runtime's choice (containerd creates a
// directory, Docker refuses the bind). Targets with a container runtime leave them out.
const LabelRuntimeDefined = caseneeds.RuntimeDefined

// hostPathMatrixCase is type t with o at the path, directly or through a symlink (the type
// check follows symlinks, v1.37 pkg/volume/hostpath checkType).
func hostPathMatrixCase(t corev1.HostPathType, o hostObject, viaSymlink bool) *framework.Case {
	path := hostPathRoot + typeSlug(t) + "-" + string(o.kind)
	what := o.phrase
	host := []framework.HostObject{{Path: path, Kind: o.kind}}
	if viaSymlink {
		path += "-link"
		what = "a symlink to " + o.phrase
		host = []framework.HostObject{host[0], {Path: path, Kind: framework.KindSymlink, Target: host[0].Path}}
	}
	labels := []string{"matrix"}
	if t == corev1.HostPathUnset && o.kind == framework.KindNothing {
		labels = append(labels, LabelRuntimeDefined)
	}
	desc := "Seed 001: the type is checked against what exists at the path before the pod starts; *OrCreate creates what is missing."
	if t == corev1.HostPathDirectory && viaSymlink {
		// userpain.go hostPathSymlinkChain: "is not a directory" through a symlink.
		desc = painDesc(90263, "type Directory through a symlink passes when the symlink ends at a directory and fails with \"is not a directory\" otherwise. "+desc)
		labels = append(labels, painLabels(90263)...)
	}
	return &framework.Case{
		Name:        fmt.Sprintf("hostPath type %s with %s at the path", typePhrase(t), what),
		Area:        framework.AreaHostPath,
		Profile:     framework.ProfileConformance,
		Description: desc,
		Labels:      labels,
		Host:        host,
		Pod:         hostPathPod(path, ptr(t)),
	}
}

// hostPathMissingParent: FileOrCreate needs the parent (v1.37 host_path.go: open O_CREATE),
// DirectoryOrCreate makes it (MkdirAll). No fixture is declared, so nothing exists on the host.
func hostPathMissingParent() []*framework.Case {
	var cases []*framework.Case
	for _, t := range []corev1.HostPathType{corev1.HostPathFileOrCreate, corev1.HostPathDirectoryOrCreate} {
		cases = append(cases, &framework.Case{
			Name:        fmt.Sprintf("hostPath type %s whose parent directory does not exist", t),
			Area:        framework.AreaHostPath,
			Profile:     framework.ProfileConformance,
			Description: "Seed 001 *OrCreate: a file is created only in an existing directory; a directory is created with its parents.",
			Pod:         hostPathPod(hostPathRoot+"missing-parent/"+typeSlug(t), ptr(t)),
		})
	}
	return cases
}

// hostPathValidation is the API validation of hostPath (v1.37 validateHostPathVolumeSource).
func hostPathValidation() []*framework.Case {
	rows := []struct {
		phrase string
		path   string
		t      *corev1.HostPathType
	}{
		{"an empty path", "", nil},
		{"a path with a .. element", hostPathRoot + "../../etc", nil},
		{`an unsupported type "Dir"`, hostPathRoot + "dir", ptr[corev1.HostPathType]("Dir")},
		// Types are exact strings and '..' is refused anywhere (docs/mutants.md: mutants
		// valid-hostpath-type-case-insensitive, valid-hostpath-backsteps-accepted).
		{`the type "directory" in lower case`, hostPathRoot + "dir", ptr[corev1.HostPathType]("directory")},
		{`the type "fileOrCreate" in another case`, hostPathRoot + "file", ptr[corev1.HostPathType]("fileOrCreate")},
		{"a path ending in a .. element", hostPathRoot + "dir/..", nil},
	}
	var cases []*framework.Case
	for _, r := range rows {
		cases = append(cases, &framework.Case{
			Name:          "hostPath with " + r.phrase + " at admission",
			Area:          framework.AreaHostPath,
			Profile:       framework.ProfileConformance,
			Description:   "The apiserver rejects a hostPath it cannot check: path required, no '..', one of the eight types.",
			Pod:           hostPathPod(r.path, r.t),
			AdmissionOnly: true,
		})
	}
	return cases
}
