package report

import (
	"runtime/debug"
	"testing"
)

// TestVolpermVersion: a report names the release volperm was installed at, else the stamp of the
// checkout make build ran in, else the commit, else (devel); only vX.Y.Z is a release.
func TestVolpermVersion(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}
	defer func(s string) { stamp = s }(stamp)
	for _, tt := range []struct {
		name, main, stamp string
		settings          []debug.BuildSetting
		want              string
		release           bool
	}{
		{"go install @v0.1.0", "v0.1.0", "", nil, "v0.1.0", true},
		{"go install @commit", "v0.0.0-20261126211900-0123456789ab", "", nil, "v0.0.0-20261126211900-0123456789ab", false},
		{"make build on the tag", "(devel)", "v0.1.0", vcs, "v0.1.0", true},
		{"make build past the tag", "(devel)", "v0.1.0-3-g0123456789ab", vcs, "v0.1.0-3-g0123456789ab", false},
		{"make build with changes", "(devel)", "v0.1.0-dirty", nil, "v0.1.0-dirty", false},
		{"go build with vcs stamping", "(devel)", "", vcs, "devel-0123456789ab+dirty", false},
		{"go run", "(devel)", "", nil, "(devel)", false},
	} {
		stamp = tt.stamp
		got := versionsFrom(&debug.BuildInfo{Main: debug.Module{Version: tt.main}, Settings: tt.settings}, "go", "k").Volperm
		if got != tt.want || Release(got) != tt.release {
			t.Errorf("%s: %q (release %v), want %q (release %v)", tt.name, got, Release(got), tt.want, tt.release)
		}
	}
}
