package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/suites"
)

// What `volperm run` says of a run that writes the ConformanceReport (issue 51: a vendor learns
// at the start whether the hand-in can verify and why not, and at the end what `volperm report
// verify` says of it), and the certification runs it refuses before they start.

// certifySubset refuses a certification run (--implementation) that leaves cases of the
// catalogue out by a filter or runs other cases (-f): `volperm report verify` refuses such a
// hand-in (docs/certify.md "What volperm report verify DIR checks", 3), so the run does not
// start (issue 51). --profile stays: a claim names the profile of its cases.
func certifySubset(f *runFlags) error {
	narrowed := f.narrowing()
	if f.implementation == "" || len(narrowed) == 0 {
		return nil
	}
	return usagef("a certification (--implementation) runs the whole catalogue, and %s would leave cases out: drop it; leave out what the implementation lacks by not claiming its feature (--claim: its cases are then not applicable; docs/certify.md \"Features and claims\")", strings.Join(narrowed, " and "))
}

// narrowing names the flags of f that leave cases of the catalogue out or run others.
func (f *runFlags) narrowing() []string {
	var out []string
	for _, fl := range []struct{ name, value string }{{"--label-filter", f.labelFilter}, {"--focus", f.focus}, {"--skip", f.skip}} {
		if fl.value != "" {
			out = append(out, fmt.Sprintf("%s %q", fl.name, fl.value))
		}
	}
	if len(f.cases.files) > 0 {
		out = append(out, "-f "+strings.Join(f.cases.files, " -f "))
	}
	return out
}

// checkHost is hostfeature.Check (a test's stand-in for a fresh machine's kernel).
var checkHost = hostfeature.Check

// certifyPlan is what the start of a certification run can tell of its hand-in.
type certifyPlan struct {
	// claimed are the features claimed, unclaimed those not claimed that have selected cases,
	// each with its selected cases.
	claimed, unclaimed []featureCases
	// notApplicable is how many selected cases are of a feature not claimed.
	notApplicable int
	// cannot says why the hand-in cannot verify whatever the cases do, one reason each.
	cannot []string
}

type featureCases struct {
	name  string
	cases int
}

func (fc featureCases) String() string { return fmt.Sprintf("%s (%d cases)", fc.name, fc.cases) }

// planCertification is what the hand-in of a run of cases with cfg can be: named says whether
// an implementation names what is certified, narrowed names the flags that left cases out
// (volperm runner's E2E_FOCUS and E2E_SKIP, which it does not refuse).
func planCertification(cfg *suites.CertifyConfig, named bool, narrowed []string, cases []*framework.Case) certifyPlan {
	var p certifyPlan
	per := map[string]int{}
	var required []*framework.Case
	for _, c := range cases {
		all := true
		for _, f := range framework.CaseFeatures(c) {
			per[f]++
			all = all && slices.Contains(cfg.Claims, f)
		}
		if all {
			required = append(required, c)
		} else {
			p.notApplicable++
		}
	}
	for _, f := range framework.FeatureNames() {
		fc := featureCases{f, per[f]}
		switch {
		case slices.Contains(cfg.Claims, f):
			p.claimed = append(p.claimed, fc)
		case fc.cases > 0:
			p.unclaimed = append(p.unclaimed, fc)
		}
	}
	if !named {
		p.cannot = append(p.cannot, "no --implementation names what is certified (docs/certify.md)")
	}
	if len(narrowed) > 0 {
		p.cannot = append(p.cannot, fmt.Sprintf("%s left cases out, and a certification runs the whole catalogue", strings.Join(narrowed, " and ")))
	}
	for _, fc := range p.claimed {
		if fc.cases == 0 {
			// verify: a claim the run did not test is no claim (issue 33).
			p.cannot = append(p.cannot, fmt.Sprintf("the claim %s has none of the cases selected: run the profile its cases are in, or drop the claim", fc.name))
		}
	}
	// docs/spec.md [probes.protected-symlinks]: the spec assumes a kubelet host's setting, which a
	// fresh machine's kernel does not have; the cases that depend on it are not run here.
	if m := checkHost(hostfeature.ProtectedSymlinks); m != nil {
		n := 0
		for _, c := range required {
			if len(suites.Assumes(c)) > 0 {
				n++
			}
		}
		if n > 0 {
			p.cannot = append(p.cannot, fmt.Sprintf("%d required cases assume fs.protected_symlinks=1, and %s: %s", n, m.Why, m.How))
		}
	}
	return p
}

// start prints, before the first case, what the hand-in certifies and whether it can verify.
func (p certifyPlan) start(w io.Writer, reportDir string) {
	claims := "claims nothing"
	if len(p.claimed) > 0 {
		claims = "claims " + joinFeatureCases(p.claimed)
	}
	fmt.Fprintf(w, "certification: %s; not claimed, so their cases are not applicable (%d): %s\n", claims, p.notApplicable, joinFeatureCases(p.unclaimed))
	if len(p.cannot) == 0 {
		fmt.Fprintf(w, "certification: this run can verify: `volperm report verify %s` accepts it when every required case passes\n", reportDir)
		return
	}
	fmt.Fprintf(w, "certification: this run cannot verify: %s\n", strings.Join(p.cannot, "; "))
}

// end prints what `volperm report verify` says of the hand-in the run wrote into reportDir.
func (p certifyPlan) end(w io.Writer, reportDir string) {
	problems, err := certify.Verify(reportDir, catalogue.Digest())
	switch {
	case err != nil:
		fmt.Fprintf(w, "certification: the hand-in cannot be verified: %v\n", err)
	case len(problems) == 0:
		claims := "nothing but the profiles"
		if len(p.claimed) > 0 {
			claims = "the claims " + featureNames(p.claimed)
		}
		fmt.Fprintf(w, "certification: verified: `volperm report verify %s` accepts this hand-in; it certifies %s\n", reportDir, claims)
	default:
		fmt.Fprintf(w, "certification: this hand-in will not verify, as `volperm report verify %s` says (%d problem(s)):\n", reportDir, len(problems))
		for _, pr := range problems {
			fmt.Fprintf(w, "  %s\n", pr)
		}
		for _, why := range p.cannot {
			fmt.Fprintf(w, "certification: %s\n", why)
		}
	}
}

func joinFeatureCases(fs []featureCases) string {
	if len(fs) == 0 {
		return "none"
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return strings.Join(out, ", ")
}

func featureNames(fs []featureCases) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return strings.Join(out, ", ")
}
