package report

import (
	"regexp"
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

// stamp is what `make build` stamps into the binary: `git describe --tags --always --dirty` of
// the checkout (v0.1.0 on a tagged commit, v0.1.0-3-gabcdef123456 after it, +dirty... with
// local changes). Empty for go install and go run.
var stamp string

// mainVersion is the module version (go install ...@vX.Y.Z), else the checkout's stamp (make
// build), else for a build from a checkout ("(devel)", e.g. go run) the VCS revision it was
// built from.
func mainVersion(bi *debug.BuildInfo) string {
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	if stamp != "" {
		return stamp
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

// release matches a tagged release, vMAJOR.MINOR.PATCH and nothing more.
var release = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// Release says whether v names a tagged release of volperm, one a reviewer can get again with
// `go install github.com/volperm/volperm/cmd/volperm@v` or a checkout of its tag; a pseudo-version,
// a commit past a tag, a dirty checkout or "(devel)" is a development build.
func Release(v string) bool { return release.MatchString(v) }
