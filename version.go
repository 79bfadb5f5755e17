// Package volperm is the version of this tree: VERSION, the one file every build of volperm
// takes its version from, make build, go build, go run, go install and the runner image alike
// (issue 51; docs/certify.md "Versions"). framework/report versionOf adds what the build knows
// of its commit.
package volperm

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is VERSION's line: vMAJOR.MINOR.PATCH on a release's commit, vMAJOR.MINOR.PATCH-dev
// on the commits towards the next one (docs/certify.md "Versions"; CHANGELOG.md names each
// release, and TestChangelogAgrees holds the two together).
var Version = strings.TrimSpace(versionFile)
