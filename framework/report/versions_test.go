package report

import (
	"runtime/debug"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/volperm/volperm"
)

// TestVolpermVersion: a build names VERSION's release as it is, a pre-release with its commit,
// and never a release when its tree had local changes or it cannot tell (docs/certify.md
// "Versions"); only vX.Y.Z is a release.
func TestVolpermVersion(t *testing.T) {
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-07T20:00:00Z"}, {Key: "vcs.modified", Value: modified}}
	}
	const pseudo = "v0.0.0-20261129002449-b5f2c650e00b"
	for _, tt := range []struct {
		name, file, main string
		settings         []debug.BuildSetting
		want             string
		release          bool
	}{
		{"make build of a release's commit", "v0.2.0", pseudo, vcs("false"), "v0.2.0", true},
		{"go install @v0.2.0", "v0.2.0", "v0.2.0", nil, "v0.2.0", true},
		{"go install @COMMIT of a release's commit", "v0.2.0", pseudo, nil, "v0.2.0", true},
		// The choice of issue 51: a release's VERSION in a tree with local changes, or in a build
		// that cannot show its tree was clean, is not the release.
		{"make build of a release's commit with local changes", "v0.2.0", pseudo + "+dirty", vcs("true"), "v0.2.0+0123456789ab.dirty", false},
		{"Go 1.24's module version of a changed checkout, no VCS settings", "v0.2.0", pseudo + "+dirty", nil, "v0.2.0+b5f2c650e00b.dirty", false},
		{"go run, -buildvcs=false, a test binary: nothing known of the tree", "v0.2.0", "(devel)", nil, "v0.2.0+unstamped", false},
		{"make build between releases", "v0.3.0-dev", pseudo, vcs("false"), "v0.3.0-dev+0123456789ab", false},
		{"make build between releases with local changes", "v0.3.0-dev", "(devel)", vcs("true"), "v0.3.0-dev+0123456789ab.dirty", false},
		{"go install @COMMIT between releases", "v0.3.0-dev", pseudo, nil, "v0.3.0-dev+b5f2c650e00b", false},
		{"go run between releases", "v0.3.0-dev", "(devel)", nil, "v0.3.0-dev+unstamped", false},
	} {
		got := versionOf(tt.file, &debug.BuildInfo{Main: debug.Module{Version: tt.main}, Settings: tt.settings})
		if got != tt.want || Release(got) != tt.release || !semver.IsValid(got) {
			t.Errorf("%s: %q (release %v, valid %v), want %q (release %v)", tt.name, got, Release(got), semver.IsValid(got), tt.want, tt.release)
		}
	}
	if got := versionOf("v0.2.0", nil); got != "v0.2.0+unstamped" {
		t.Errorf("no build info: %q, want v0.2.0+unstamped", got)
	}
	// Older volperms' versions, as reports carry them, are development builds.
	for _, v := range []string{pseudo, "v0.1.0-3-g0123456789ab", "v0.1.0-dirty", "devel-0123456789ab+dirty", "(devel)"} {
		if Release(v) {
			t.Errorf("Release(%q): want false", v)
		}
	}
	// This binary's: VERSION's, with nothing known of its tree (a test binary).
	if got, want := CurrentVersions().Volperm, volperm.Version+"+unstamped"; got != want {
		t.Errorf("CurrentVersions().Volperm = %q, want %q", got, want)
	}
}
