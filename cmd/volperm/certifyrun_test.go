package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/suites"
)

// TestCertifyPlan (issue 51): the start of a certification run says what it claims, how many
// cases are not applicable for want of a claim, and why its hand-in cannot verify: no
// implementation, a filter that left cases out (volperm runner's, which is not refused), a claim
// without a case, or a host whose fs.protected_symlinks is 0 (a fresh machine's kernel
// default), with the sysctl to set.
func TestCertifyPlan(t *testing.T) {
	cases := catalogue.All()
	start := func(claims []string, named bool, cases []*framework.Case, narrowed ...string) string {
		var b bytes.Buffer
		planCertification(&suites.CertifyConfig{Claims: claims}, named, narrowed, cases).start(&b, "reports")
		return b.String()
	}
	check := func(out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(out) {
				t.Errorf("start lines do not match %q:\n%s", w, out)
			}
		}
	}

	checkHost = func(hostfeature.Feature) *hostfeature.Missing { return nil }
	defer func() { checkHost = hostfeature.Check }()
	check(start([]string{framework.FeatureVolumeBindMountOptions}, true, cases),
		`(?m)^certification: claims volumeBindMountOptions \([1-9]\d* cases\); not claimed, so their cases are not applicable \([1-9]\d*\): emptyDirVolumeMode \(\d+ cases\), .*userNamespaces \([1-9]\d* cases\), supplementalGroupsPolicy \([1-9]\d* cases\), imageVolumes \([1-9]\d* cases\)$`,
		"(?m)^certification: this run can verify: `volperm report verify reports` accepts it when every required case passes$")

	// The atomicwriter area: the cases that assume it (docs/spec.md [probes.protected-symlinks]),
	// and none of the flexVolume allowlist.
	checkHost = func(f hostfeature.Feature) *hostfeature.Missing {
		return &hostfeature.Missing{Feature: f, Why: "fs.protected_symlinks is 0 here", How: "set it as systemd does on every kubelet host: sysctl -w fs.protected_symlinks=1"}
	}
	out := start([]string{framework.FeatureAtomicWriteVolumeUserFields, framework.FeaturePreservePermissions, framework.FeatureFlexVolumeAllowlist}, false, catalogue.Filter(cases, framework.AreaAtomicWriter), `--focus "secret"`)
	check(out, `(?m)^certification: claims atomicWriteVolumeUserFields \(\d+ cases\), preservePermissions \(\d+ cases\), flexVolumeAllowlist \(0 cases\); not claimed, so their cases are not applicable \(0\): none$`,
		`(?m)^certification: this run cannot verify: no --implementation names what is certified \(docs/certify.md\); --focus "secret" left cases out, and a certification runs the whole catalogue; the claim flexVolumeAllowlist has none of the cases selected: run the profile its cases are in, or drop the claim; [1-9]\d* required cases assume fs.protected_symlinks=1, and fs.protected_symlinks is 0 here: set it as systemd does on every kubelet host: sysctl -w fs.protected_symlinks=1$`)
	t.Log(out)
}
