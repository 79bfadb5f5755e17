package volperm

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/mod/semver"
)

// releaseHeading is a release's heading in CHANGELOG.md: "## vX.Y.Z (YYYY-MM-DD)".
var releaseHeading = regexp.MustCompile(`^## (v\d+\.\d+\.\d+) \(\d{4}-\d{2}-\d{2}\)$`)

// TestChangelogAgrees: VERSION and CHANGELOG.md's newest release heading say the same
// (docs/certify.md "Versions", issue 51). A release's VERSION, vX.Y.Z, is the CHANGELOG's first
// heading, "## vX.Y.Z (date)", with no Unreleased section above it: a commit past a release
// that changes what a user sees sets the next vX.Y.Z-dev. A pre-release's VERSION is newer
// than every release the CHANGELOG names.
func TestChangelogAgrees(t *testing.T) {
	if err := agree(Version, readFile(t, "CHANGELOG.md")); err != "" {
		t.Error(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// agree is what is wrong between a VERSION and a CHANGELOG, "" when nothing.
func agree(version, changelog string) string {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return "VERSION " + version + ": want vMAJOR.MINOR.PATCH, or vMAJOR.MINOR.PATCH-dev between releases"
	}
	var first, newest string
	for _, l := range strings.Split(changelog, "\n") {
		if !strings.HasPrefix(l, "## ") {
			continue
		}
		if first == "" {
			first = l
		}
		m := releaseHeading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if newest != "" && semver.Compare(m[1], newest) >= 0 {
			return "CHANGELOG.md: " + l + " below " + newest + ": want the releases newest first, each once"
		}
		if newest == "" {
			newest = m[1]
		}
	}
	if semver.Prerelease(version) == "" {
		if !releaseHeading.MatchString(first) || !strings.HasPrefix(first, "## "+version+" ") {
			return "VERSION says the release " + version + ", CHANGELOG.md's first heading is " + strings.TrimPrefix(first, "## ") +
				": a release's commit heads the CHANGELOG with \"## " + version + " (YYYY-MM-DD)\"; between releases VERSION is the next vX.Y.Z-dev"
		}
		return ""
	}
	if newest != "" && semver.Compare(newest, version) >= 0 {
		return "VERSION " + version + " is not newer than CHANGELOG.md's release " + newest + ": between releases VERSION is the next release's vX.Y.Z-dev"
	}
	return ""
}

// TestAgree: what the check refuses.
func TestAgree(t *testing.T) {
	const v1 = "## v0.1.0 (2026-11-27)\n- first\n"
	const v2 = "# Changelog\n\n## v0.2.0 (2026-12-07)\n- more\n\n" + v1
	for _, tt := range []struct {
		name, version, changelog string
		ok                       bool
	}{
		{"a release heading the CHANGELOG", "v0.2.0", v2, true},
		{"a release the CHANGELOG does not have yet", "v0.3.0", v2, false},
		{"a release whose CHANGELOG has unreleased changes above it", "v0.2.0", "## Unreleased\n- after\n\n" + v2[len("# Changelog\n\n"):], false},
		{"an older release", "v0.1.0", v2, false},
		{"between releases", "v0.3.0-dev", "## Unreleased\n- next\n\n" + v2, true},
		{"between releases, nothing unreleased yet", "v0.3.0-dev", v2, true},
		{"a pre-release of a release already out", "v0.2.0-dev", v2, false},
		{"no v", "0.2.0", v2, false},
		{"build metadata", "v0.2.0+abc", v2, false},
		{"releases out of order", "v0.3.0-dev", v1 + "## v0.2.0 (2026-12-07)\n", false},
	} {
		if err := agree(tt.version, tt.changelog); (err == "") != tt.ok {
			t.Errorf("%s: VERSION %s: %q, want ok %v", tt.name, tt.version, err, tt.ok)
		}
	}
}
