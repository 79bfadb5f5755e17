package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/hostfeature"
)

// vendorAgent is a node agent written in Python from docs/exec-protocol.md and the rules it
// points to, as a vendor writes one: its hello lists imageVolumes, and no userNamespaces,
// supplementalGroupsPolicy, volumeBindMountOptions or seLinuxMount.
const vendorAgent = "testdata/vendoragent/agent.py"

// vendorClaims are the features the vendor agent has (docs/certify.md "Features and claims").
var vendorClaims = []string{framework.FeatureEmptyDirVolumeMode, framework.FeatureAtomicWriteVolumeUserFields,
	framework.FeaturePreservePermissions, framework.FeatureFlexVolumeAllowlist, framework.FeatureImageVolumes}

// TestVendorAgent (issue 51) plays a vendor: the agent of vendorAgent certified on the whole
// catalogue with the claims it can make, as docs/certify.md says (volperm run --implementation
// --claim, then volperm report verify), gets a verified report that names its claims; the
// features its hello lacks are not claimed, their cases not applicable, and the run says at its
// start and end that it verifies. A claim its hello lacks is refused before the run (TestBadInput).
func TestVendorAgent(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root, hostfeature.ProtectedSymlinks)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the vendor's agent:", err)
	}
	agent, err := filepath.Abs(vendorAgent)
	if err != nil {
		t.Fatal(err)
	}
	impl := writeFile(t, "implementation.yaml", "vendor: Example Corp\nproduct: Example Python Agent\nversion: 0.1.0\n")
	dirs := newRunDirs(t, 0)
	run := exec.Command(binary(t), "run", "--target", "exec:"+agent, "--work-dir", caseroottest.TempDir(t), "--report-dir", dirs.reports,
		"--implementation", impl, "--claim", strings.Join(vendorClaims, ","))
	run.Env = dirs.env()
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, tail(string(out)))
	}
	for _, want := range []string{
		"certification: claims " + vendorClaims[0] + " (",
		"; not claimed, so their cases are not applicable (",
		"userNamespaces (", "supplementalGroupsPolicy (",
		"certification: this run can verify",
		"certification: verified: `volperm report verify " + dirs.reports + "` accepts this hand-in; it certifies the claims " + strings.Join(vendorClaims, ", ") + "\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run's output lacks %q:\n%s", want, tail(string(out)))
		}
	}
	if code, vout, verr := runMain("report", "verify", dirs.reports); code != exitOK || !strings.Contains(vout, dirs.reports+": verified\n") {
		t.Fatalf("report verify: exit %d\n%s%s", code, vout, verr)
	}
	// What the reports a person reads say of it (issue 54): verifies, with the claims.
	for _, f := range []string{"summary.md", "index.html"} {
		page, err := os.ReadFile(filepath.Join(dirs.reports, f))
		if err != nil || !strings.Contains(string(page), "verifies") || strings.Contains(string(page), "does not verify") {
			t.Errorf("%s does not say the hand-in verifies (%v)", f, err)
		}
	}

	raw, err := os.ReadFile(filepath.Join(dirs.reports, certify.File))
	if err != nil {
		t.Fatal(err)
	}
	var r certify.Report
	if err := yaml.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Result != certify.ResultSuccess || !slices.Equal(r.Claims, vendorClaims) {
		t.Errorf("%s: result %s, claims %v; want success, %v", certify.File, r.Result, r.Claims, vendorClaims)
	}
	for _, f := range r.Features {
		claimed := slices.Contains(vendorClaims, f.Name)
		switch {
		case f.Claimed != claimed:
			t.Errorf("feature %s: claimed %v, want %v", f.Name, f.Claimed, claimed)
		case claimed && (f.Result != certify.ResultSuccess || f.Total == 0):
			t.Errorf("claimed feature %s: %s of %d cases, want success", f.Name, f.Result, f.Total)
		case !claimed && f.Result != certify.ResultUnclaimed:
			t.Errorf("feature %s: %s, want unclaimed", f.Name, f.Result)
		}
	}
	for _, f := range []string{framework.FeatureUserNamespaces, framework.FeatureSupplementalGroupsPolicy} {
		if !slices.ContainsFunc(r.NotApplicable, func(na certify.NotApplicable) bool {
			return strings.HasPrefix(na.Why, "not claimed: "+f+" ") && na.Cases > 0
		}) {
			t.Errorf("%s lists no case not applicable for the unclaimed %s: %+v", certify.File, f, r.NotApplicable)
		}
	}
	for _, p := range r.Profiles {
		t.Logf("profile %s: %s, %d required cases", p.Name, p.Result, p.Total)
	}
}
