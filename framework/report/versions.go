package report

import (
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/volperm/volperm/hostfeature"
)

// Versions are what a report must name so that a run can be reproduced.
type Versions struct {
	Volperm string `json:"volperm"`
	Go      string `json:"go"`
	Kernel  string `json:"kernel"`
	// KubernetesAPI is the k8s.io/api module the binary was built with.
	KubernetesAPI string `json:"k8sAPI"`
}

// CurrentVersions reads the versions of this binary (debug.ReadBuildInfo) and of the kernel.
// A test binary carries no dependency list, so there k8s.io/api is "unknown".
func CurrentVersions() Versions {
	bi, _ := debug.ReadBuildInfo()
	return versionsFrom(bi, runtime.Version(), hostfeature.KernelRelease())
}

func versionsFrom(bi *debug.BuildInfo, goVersion, kernel string) Versions {
	v := Versions{Volperm: "unknown", Go: goVersion, Kernel: kernel, KubernetesAPI: "unknown"}
	if bi == nil {
		return v
	}
	v.Volperm = mainVersion(bi)
	for _, d := range bi.Deps {
		if d.Path == "k8s.io/api" {
			v.KubernetesAPI = d.Version
			if r := d.Replace; r != nil {
				v.KubernetesAPI = strings.TrimSuffix(r.Path+"@"+r.Version, "@")
			}
		}
	}
	return v
}

// mainVersion is the module version, or for a build from a checkout ("(devel)", e.g. go run)
// the VCS revision it was built from.
func mainVersion(bi *debug.BuildInfo) string {
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "(devel)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "devel-" + rev + dirty
}
