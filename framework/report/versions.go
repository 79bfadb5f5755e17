package report

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/volperm/volperm"
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
	v := Versions{Volperm: mainVersion(bi), Go: goVersion, Kernel: kernel, KubernetesAPI: "unknown"}
	if bi == nil {
		return v
	}
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

// mainVersion is the version of the tree the binary was built from (VERSION, volperm.Version)
// with what the build knows of its commit.
func mainVersion(bi *debug.BuildInfo) string { return versionOf(volperm.Version, bi) }

// versionOf is file, VERSION's line, as a build of it names itself (docs/certify.md
// "Versions"): a release's (vX.Y.Z) as it is; a pre-release's (vX.Y.Z-dev) with its commit as
// build metadata, vX.Y.Z-dev+0123456789ab. A build that cannot show its tree was clean is never
// a release (issue 51): local changes add "dirty" (v0.2.0+0123456789ab.dirty), and a build that
// knows nothing of its tree says "unstamped" (v0.2.0+unstamped: go run, -buildvcs=false, a test
// binary, a tree without git). What it knows is the build's VCS settings (go build and make build
// in a checkout: vcs.revision, vcs.modified), else its module version (go install ...@vX.Y.Z, or
// ...@COMMIT: a pseudo-version's 12 hex digits; "+dirty" after it, Go 1.24's version of a changed
// checkout).
func versionOf(file string, bi *debug.BuildInfo) string {
	var rev string
	var dirty, known bool
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev, known = s.Value, true
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if mv := bi.Main.Version; !known && mv != "" && mv != "(devel)" {
			known, dirty = true, semver.Build(mv) == "+dirty"
			if r, err := module.PseudoVersionRev(strings.TrimSuffix(mv, "+dirty")); err == nil {
				rev = r
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var meta []string
	switch {
	case !known:
		meta = []string{"unstamped"}
	case dirty && rev != "":
		meta = []string{rev, "dirty"}
	case dirty:
		meta = []string{"dirty"}
	case semver.Prerelease(file) != "" && rev != "":
		meta = []string{rev}
	}
	if len(meta) == 0 {
		return file
	}
	return file + "+" + strings.Join(meta, ".")
}

// release matches a release, vMAJOR.MINOR.PATCH and nothing more.
var release = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

// Release says whether v names a release of volperm: a build without local changes of a commit
// whose VERSION is v (docs/certify.md "Versions"). A pre-release (vX.Y.Z-dev+COMMIT), a build with
// local changes (+...dirty) or without VCS stamp (+unstamped), a Go pseudo-version or "(devel)"
// of an older volperm is not.
func Release(v string) bool { return release.MatchString(v) }
