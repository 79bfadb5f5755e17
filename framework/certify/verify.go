package certify

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/report"
)

// Files are what a handed-in report directory must hold.
var Files = []string{File, "summary.json", "summary.md", "junit.xml", "run.log"}

// UnreadableError is a report directory whose files cannot be read or parsed: nothing can be
// verified (`volperm report verify` exits 2).
type UnreadableError struct{ Err error }

func (e *UnreadableError) Error() string { return e.Err.Error() }
func (e *UnreadableError) Unwrap() error { return e.Err }

// Verify checks the report directory dir as a reviewer's bot would and returns every problem
// found, one line each (none: verified). digest is the verifier's own catalogue.Digest. The
// checks: the files are all there; the report is a ConformanceReport naming its implementation;
// it ran this volperm's catalogue; junit.xml and summary.json agree case by case; the report's
// results are what junit.xml gives for its claims; no required case failed or did not run;
// the target and the releases agree between the files. A directory of what hydrophone copied
// back (RunnerJUnit, no conformance-report.yaml) is verified through the hand-in it carries.
func Verify(dir, digest string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, File)); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, RunnerJUnit)); err == nil {
			return verifyRunnerJUnit(dir, digest)
		}
	}
	var problems []string
	for _, f := range Files {
		if _, err := os.Stat(filepath.Join(dir, f)); errors.Is(err, os.ErrNotExist) {
			problems = append(problems, fmt.Sprintf("%s is missing: hand in every file volperm run wrote (%v)", f, Files))
		} else if err != nil {
			return nil, &UnreadableError{err}
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	var r Report
	raw, err := os.ReadFile(filepath.Join(dir, File))
	if err == nil {
		err = yaml.UnmarshalStrict(raw, &r)
	}
	if err != nil {
		return nil, &UnreadableError{fmt.Errorf("%s: %w", File, err)}
	}
	var s report.Summary
	if raw, err = os.ReadFile(filepath.Join(dir, "summary.json")); err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		return nil, &UnreadableError{fmt.Errorf("summary.json: %w", err)}
	}
	outcomes, err := ReadJUnit(filepath.Join(dir, "junit.xml"))
	if err != nil {
		return nil, &UnreadableError{err}
	}
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	if r.APIVersion != APIVersion || r.Kind != Kind {
		add("%s: apiVersion %q kind %q, want %s %s", File, r.APIVersion, r.Kind, APIVersion, Kind)
	}
	if im := r.Implementation; im.Vendor == "" || im.Product == "" || im.Version == "" {
		add("%s: the implementation needs a vendor, a product and a version (volperm run --implementation FILE)", File)
	}
	switch {
	case r.Volperm.CatalogueDigest != digest:
		add("%s: catalogue digest %s is not this volperm's (%s): run the volperm release the report is checked with", File, r.Volperm.CatalogueDigest, digest)
	case r.Volperm.Source != "catalogue":
		add("%s: the cases came from %s, not from volperm's catalogue", File, r.Volperm.Source)
	}
	if r.Volperm.LabelFilter != "" || r.Volperm.Focus != "" || r.Volperm.Skip != "" {
		add("%s: the run left cases out (label filter %q, focus %q, skip %q): a certification runs the whole catalogue; claim features instead", File, r.Volperm.LabelFilter, r.Volperm.Focus, r.Volperm.Skip)
	}
	for _, c := range r.Claims {
		if !slices.Contains(framework.FeatureNames(), c) {
			add("%s: claims %q, which is no feature (%v)", File, c, framework.FeatureNames())
		}
	}

	// junit.xml and summary.json, case by case.
	failed, skipped := names(outcomes, StateFailed), names(outcomes, StateSkipped)
	if len(outcomes) != s.Totals.Total+s.NotSelected {
		add("junit.xml has %d testcases, summary.json counts %d", len(outcomes), s.Totals.Total+s.NotSelected)
	}
	if sf := summaryNames(s.Failures); !slices.Equal(failed, sf) {
		add("junit.xml and summary.json disagree on the failed cases: %s", diffNames(failed, sf, "junit.xml", "summary.json"))
	}
	if sn := summaryNames(s.NotRun); !slices.Equal(skipped, sn) {
		add("junit.xml and summary.json disagree on the cases not run: %s", diffNames(skipped, sn, "junit.xml", "summary.json"))
	}

	// The report's results, recomputed from junit.xml with its claims.
	want := Build(outcomes, Options{Claims: r.Claims})
	if r.Result != want.Result {
		add("%s: result %s, but junit.xml gives %s", File, r.Result, want.Result)
	}
	for _, p := range want.Profiles {
		if have, differs := profileDiffers(r.Profiles, p); differs {
			add("%s: profile %s says %s, junit.xml gives %s", File, p.Name, have, describe(p.Result, p.Counts))
		}
	}
	if len(r.Profiles) != len(want.Profiles) {
		add("%s: %d profiles, junit.xml gives %d", File, len(r.Profiles), len(want.Profiles))
	}
	for _, f := range want.Features {
		got := findFeature(r.Features, f.Name)
		if got == nil || *got != f {
			have := "nothing"
			if got != nil {
				have = describe(got.Result, got.Counts)
			}
			add("%s: feature %s says %s, junit.xml gives %s", File, f.Name, have, describe(f.Result, f.Counts))
		}
	}
	// Per pool, the same recomputation; and each pool's kubelet among the releases the cases ran in.
	for _, p := range want.Pools {
		got := findPool(r.Pools, p.Name)
		if got == nil {
			add("%s: no result for pool %s, which junit.xml's cases ran on", File, p.Name)
			continue
		}
		if got.Result != p.Result || got.Kubelet != p.Kubelet || !slices.Equal(got.Nodes, p.Nodes) {
			add("%s: pool %s says %s (kubelet %s, nodes %v), junit.xml gives %s (kubelet %s, nodes %v)", File, p.Name, got.Result, got.Kubelet, got.Nodes, p.Result, p.Kubelet, p.Nodes)
		}
		for _, pp := range p.Profiles {
			if have, differs := profileDiffers(got.Profiles, pp); differs {
				add("%s: pool %s, profile %s says %s, junit.xml gives %s", File, p.Name, pp.Name, have, describe(pp.Result, pp.Counts))
			}
		}
		if !slices.ContainsFunc(want.Releases, func(rp ReleasePair) bool { return rp.Kubelet == framework.MinorRelease(p.Kubelet) }) {
			add("%s: pool %s runs kubelet %s, but junit.xml's cases ran in %v", File, p.Name, p.Kubelet, want.Releases)
		}
	}
	for _, p := range r.Pools {
		if findPool(want.Pools, p.Name) == nil {
			add("%s: pool %s, on which junit.xml's cases did not run", File, p.Name)
		}
	}
	// Every claimed feature had cases in the run, and none of them failed or did not run
	// (issue 33: a claim the run did not test is no claim).
	for _, f := range want.Features {
		switch {
		case !f.Claimed:
		case f.Total == 0:
			add("feature %s is claimed, but the run had none of its cases: run the profile its cases are in (the alpha gates' cases are --profile alpha; docs/certify.md) or drop the claim", f.Name)
		case f.Failed > 0 || f.NotRun > 0:
			add("feature %s is claimed: %d of its %d case(s) failed, %d did not run", f.Name, f.Failed, f.Total, f.NotRun)
		}
	}
	// No required case failed or did not run.
	for _, p := range want.Profiles {
		if len(p.FailedCases) > 0 {
			add("profile %s: %d required case(s) failed: %s", p.Name, len(p.FailedCases), joinNames(p.FailedCases))
		}
		if len(p.NotRunCases) > 0 {
			add("profile %s: %d required case(s) did not run: %s", p.Name, len(p.NotRunCases), joinNames(p.NotRunCases))
		}
	}

	// Versions and releases.
	if r.Target.Name != s.Target.Name || r.Target.Version != s.Target.Version {
		add("%s names target %s %s, summary.json %s %s", File, r.Target.Name, r.Target.Version, s.Target.Name, s.Target.Version)
	}
	if r.Volperm.Version != s.Versions.Volperm {
		add("%s was written by volperm %s, summary.json by %s", File, r.Volperm.Version, s.Versions.Volperm)
	}
	if !reflect.DeepEqual(nonNil(r.Releases), nonNil(want.Releases)) {
		add("%s lists the releases %v, junit.xml's cases ran in %v", File, r.Releases, want.Releases)
	}
	return problems, nil
}

// profileDiffers says whether the report's profiles lack want or say otherwise, and what they
// say ("nothing" when they lack it).
func profileDiffers(have []ProfileResult, want ProfileResult) (string, bool) {
	got := findProfile(have, want.Name)
	if got == nil {
		return "nothing", true
	}
	return describe(got.Result, got.Counts), got.Result != want.Result || got.Counts != want.Counts
}

func findPool(ps []PoolResult, name string) *PoolResult {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

func summaryNames(rs []report.CaseResult) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// diffNames words what a has and b lacks and the other way round.
func diffNames(a, b []string, aName, bName string) string {
	var onlyA, onlyB []string
	for _, n := range a {
		if !slices.Contains(b, n) {
			onlyA = append(onlyA, n)
		}
	}
	for _, n := range b {
		if !slices.Contains(a, n) {
			onlyB = append(onlyB, n)
		}
	}
	return fmt.Sprintf("only in %s: [%s]; only in %s: [%s]", aName, joinNames(onlyA), bName, joinNames(onlyB))
}

func findProfile(ps []ProfileResult, name string) *ProfileResult {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

func findFeature(fs []FeatureResult, name string) *FeatureResult {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// nonNil is s, or an empty slice for nil (YAML reads an empty list back as nil or empty).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// VolpermVersion is the volperm version the hand-in in dir names (its report's volperm.version).
func VolpermVersion(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		return "", err
	}
	var r Report
	if err := yaml.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	return r.Volperm.Version, nil
}

// VersionNote is what verify says of the volperm version v that made a hand-in (docs/certify.md
// "Versions"): "release vX.Y.Z" for a release, which a checkout of its commit rebuilds; else why
// it is not one (framework/report versionOf): a build with local changes ("dirty"; "-dirty" of
// older volperms' git describe), which nothing rebuilds; a build that knew nothing of its tree
// ("unstamped"); a development build, which only its own commit rebuilds.
func VersionNote(v string) string {
	switch {
	case report.Release(v):
		return fmt.Sprintf("made by volperm release %s (CHANGELOG.md %q)", v, v)
	case strings.Contains(v, "dirty"):
		return fmt.Sprintf("made by volperm %s, built with local changes, not a release: no commit rebuilds it (docs/certify.md \"Versions\")", v)
	case strings.HasSuffix(v, "+unstamped"):
		return fmt.Sprintf("made by volperm %s, a build that did not know its commit (go run, -buildvcs=false), not a release: hand in what make build makes (docs/certify.md \"Versions\")", v)
	default:
		return fmt.Sprintf("made by volperm %s, a development build, not a release: a reviewer can rebuild it only from its commit (docs/certify.md \"Versions\")", v)
	}
}
