// Package certify is the ConformanceReport a vendor hands in (docs/certify.md): what `volperm
// run` writes beside its other reports, built from the JUnit file it wrote, and `volperm report
// verify`, which checks a handed-in report directory as the CNCF bot checks a conformance
// pull request. Modelled on Gateway API's conformance reports (implementation, profiles,
// claimed features) and the k8s-conformance submission (the files, the versions).
package certify

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"
	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/report"
)

// File is the report's name in a report directory.
const File = "conformance-report.yaml"

// APIVersion and Kind of the report document.
const (
	APIVersion = "volperm.dev/v1"
	Kind       = "ConformanceReport"
)

// Results of a profile, a claimed feature or the whole report.
const (
	ResultSuccess   = "success"   // every required case ran and passed
	ResultPartial   = "partial"   // none failed, some did not run
	ResultFailure   = "failure"   // a required case failed
	ResultUnclaimed = "unclaimed" // a feature the implementation does not claim
)

// Implementation is what is certified, from `volperm run --implementation FILE`.
type Implementation struct {
	Vendor  string   `json:"vendor"`
	Product string   `json:"product"`
	Version string   `json:"version"`
	Contact Contacts `json:"contact,omitempty"`
	URL     string   `json:"url,omitempty"`
}

// Contacts are the implementation's contacts: a list, or in the file one string (as
// gateway-api's and Kubernetes' conformance PRODUCT.yaml give one address).
type Contacts []string

// UnmarshalJSON takes a list of strings or one string.
func (c *Contacts) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*c = Contacts{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("contact: want a string or a list of strings")
	}
	*c = many
	return nil
}

// LoadImplementation reads an implementation file (YAML or JSON, strict): vendor, product and
// version are required.
func LoadImplementation(path string) (Implementation, error) {
	var im Implementation
	raw, err := os.ReadFile(path)
	if err != nil {
		return im, err
	}
	if err := yaml.UnmarshalStrict(raw, &im); err != nil {
		return im, fmt.Errorf("%s: %w (want vendor, product, version, url: strings; contact: a string or a list; docs/certify.md)", path, err)
	}
	if im.Vendor == "" || im.Product == "" || im.Version == "" {
		return im, fmt.Errorf("%s: vendor, product and version are required", path)
	}
	return im, nil
}

// Report is the ConformanceReport.
type Report struct {
	APIVersion     string         `json:"apiVersion"`
	Kind           string         `json:"kind"`
	Date           time.Time      `json:"date"`
	Implementation Implementation `json:"implementation"`
	Volperm        Volperm        `json:"volperm"`
	// Target is the implementation under test as volperm reached it (its name, version and
	// details: a cluster's server version, a kind node image, an agent's version).
	Target framework.TargetInfo `json:"target"`
	// Releases are the kube-apiserver and kubelet releases of the cells the cases ran in.
	Releases []ReleasePair `json:"releases"`
	// Claims are the features the implementation claims (framework.FeatureNames).
	Claims []string `json:"claims"`
	// Result is failure if a profile or a claimed feature failed, partial if one is partial,
	// else success.
	Result   string          `json:"result"`
	Profiles []ProfileResult `json:"profiles"`
	Features []FeatureResult `json:"features"`
	// NotApplicable are the cases of releases the implementation is not (a kind cluster, an
	// exec agent or a distribution is one release), by reason: not run, never required.
	NotApplicable []NotApplicable `json:"notApplicable,omitempty"`
	// Pools are the results per pool of nodes when the cases ran on node pools (the cluster
	// target over a cluster's nodes: docs/certify.md "Every node"), each as Profiles, of the
	// required cases as that pool judged them.
	Pools []PoolResult `json:"pools,omitempty"`
}

// NotApplicable is how many cases were not applicable for one reason.
type NotApplicable struct {
	Why   string `json:"why"`
	Cases int    `json:"cases"`
}

// PoolResult is one pool of nodes: what its nodes share, its kubelet release, the nodes that
// observed its cases, and per profile the required cases as the pool judged them.
type PoolResult struct {
	Name     string          `json:"name"`
	Kubelet  string          `json:"kubelet"`
	Nodes    []string        `json:"nodes"`
	Result   string          `json:"result"`
	Profiles []ProfileResult `json:"profiles"`
}

// Volperm is the harness that ran: its version and the digest of its catalogue.
type Volperm struct {
	Version string `json:"version"`
	// CatalogueDigest is catalogue.Digest of the volperm that ran; a verifier compares it with
	// its own.
	CatalogueDigest string `json:"catalogueDigest"`
	// Source is "catalogue", or the case files the run used instead.
	Source      string `json:"source"`
	LabelFilter string `json:"labelFilter,omitempty"`
	Focus       string `json:"focus,omitempty"`
	Skip        string `json:"skip,omitempty"`
}

// ReleasePair is one kube-apiserver release with one kubelet release.
type ReleasePair struct {
	APIServer string `json:"apiserver"`
	Kubelet   string `json:"kubelet"`
}

// Counts of a profile or a feature.
type Counts struct {
	Total  int `json:"total"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	NotRun int `json:"notRun"`
}

// ProfileResult is one profile's required cases (those of no unclaimed feature).
type ProfileResult struct {
	Name   string `json:"name"`
	Result string `json:"result"`
	Counts
	// Failed and NotRun name the required cases that failed or did not run.
	FailedCases []string `json:"failedCases,omitempty"`
	NotRunCases []string `json:"notRunCases,omitempty"`
}

// FeatureResult is one feature's cases: claimed, their result; unclaimed, "unclaimed" and how
// many cases it has (neither passed nor failed).
type FeatureResult struct {
	Name    string `json:"name"`
	Claimed bool   `json:"claimed"`
	Result  string `json:"result"`
	Counts
}

// Outcome is one case of a run as the JUnit file tells it.
type Outcome struct {
	Name string
	// State is passed, failed or skipped (not run).
	State string
	Facts report.CaseFacts
	// Pools are the pools' verdicts when the case ran on node pools (report.PoolsEntry).
	Pools []report.PoolVerdict
	// Message is the failure's message or the reason the case did not run ("" when it passed).
	Message string
	// KnownDifference explains a failure the target documents (report.KnownDifferenceEntry).
	KnownDifference string
	// Observed is a failed case's Observation as the target gave it (report.ObservedEntry).
	Observed string
}

// Options are what Build needs besides the outcomes.
type Options struct {
	Date            time.Time
	Implementation  Implementation
	Claims          []string
	Target          framework.TargetInfo
	VolpermVersion  string
	CatalogueDigest string
	Source          string
	LabelFilter     string
	Focus           string
	Skip            string
}

// Build makes the report of outcomes: per profile its required cases (a case is required when
// every feature it belongs to is claimed), per feature its cases.
func Build(outcomes []Outcome, o Options) *Report {
	r := &Report{
		APIVersion: APIVersion, Kind: Kind, Date: o.Date.UTC().Truncate(time.Second),
		Implementation: o.Implementation, Target: o.Target, Claims: slices.Clone(o.Claims),
		Volperm: Volperm{Version: o.VolpermVersion, CatalogueDigest: o.CatalogueDigest, Source: o.Source, LabelFilter: o.LabelFilter, Focus: o.Focus, Skip: o.Skip},
	}
	if r.Claims == nil {
		r.Claims = []string{}
	}
	profiles := map[string]*ProfileResult{}
	feats := map[string]*FeatureResult{}
	pairs := map[ReleasePair]bool{}
	pools := map[string]*poolProfiles{}
	var (
		poolOrder []string
		unpooled  []Outcome
	)
	notApplicable := map[string]int{}
	for _, oc := range outcomes {
		if oc.Facts.NotApplicable != "" {
			// Not a case of the implementation's releases: neither required nor counted.
			notApplicable[oc.Facts.NotApplicable]++
			continue
		}
		pairs[ReleasePair{oc.Facts.APIServerRelease, oc.Facts.KubeletRelease}] = true
		required := true
		for _, f := range oc.Facts.Features {
			fr := feats[f]
			if fr == nil {
				fr = &FeatureResult{Name: f, Claimed: slices.Contains(o.Claims, f)}
				feats[f] = fr
			}
			fr.add(oc.State)
			required = required && fr.Claimed
		}
		if !required {
			continue
		}
		addTo(profiles, oc.Facts.Profile, oc.Name, oc.State)
		if len(oc.Pools) == 0 {
			unpooled = append(unpooled, oc)
		}
		for _, v := range oc.Pools {
			pp := pools[v.Pool]
			if pp == nil {
				pp = &poolProfiles{PoolResult: PoolResult{Name: v.Pool, Kubelet: v.Kubelet}, profiles: map[string]*ProfileResult{}, nodes: map[string]bool{}}
				pools[v.Pool] = pp
				poolOrder = append(poolOrder, v.Pool)
			}
			pp.nodes[v.Node] = true
			state := StatePassed
			if v.State != report.PoolPassed {
				state = StateFailed
			}
			addTo(pp.profiles, oc.Facts.Profile, oc.Name, state)
		}
	}
	for _, name := range poolOrder {
		pp := pools[name]
		// A required case no pool observed (not run, or failed before any pool was asked) counts
		// in every pool of its kubelet release as it ended (report.SameKubelet).
		for _, oc := range unpooled {
			if report.SameKubelet(oc.Facts.KubeletRelease, pp.Kubelet) {
				addTo(pp.profiles, oc.Facts.Profile, oc.Name, oc.State)
			}
		}
		pp.Nodes = slices.Sorted(maps.Keys(pp.nodes))
		pp.Profiles = profileResults(pp.profiles)
		pp.Result = worst(pp.Profiles, nil)
		r.Pools = append(r.Pools, pp.PoolResult)
	}
	for p := range pairs {
		r.Releases = append(r.Releases, p)
	}
	for _, why := range slices.Sorted(maps.Keys(notApplicable)) {
		r.NotApplicable = append(r.NotApplicable, NotApplicable{Why: why, Cases: notApplicable[why]})
	}
	sort.Slice(r.Releases, func(i, j int) bool {
		a, b := r.Releases[i], r.Releases[j]
		if a.APIServer != b.APIServer {
			return a.APIServer > b.APIServer
		}
		return a.Kubelet > b.Kubelet
	})
	r.Profiles = profileResults(profiles)
	for _, f := range framework.FeatureNames() {
		fr := feats[f]
		if fr == nil {
			fr = &FeatureResult{Name: f, Claimed: slices.Contains(o.Claims, f)}
		}
		fr.Result = ResultUnclaimed
		if fr.Claimed {
			fr.Result = fr.result()
			if fr.Total == 0 {
				fr.Result = ResultFailure // a claim the run did not test (issue 33)
			}
		}
		r.Features = append(r.Features, *fr)
	}
	r.Result = overall(r)
	return r
}

// poolProfiles is a PoolResult being built.
type poolProfiles struct {
	PoolResult
	profiles map[string]*ProfileResult
	nodes    map[string]bool
}

// addTo counts a required case in its profile's result, naming it when it failed or did not run.
func addTo(profiles map[string]*ProfileResult, profile, name, state string) {
	pr := profiles[profile]
	if pr == nil {
		pr = &ProfileResult{Name: profile}
		profiles[profile] = pr
	}
	pr.add(state)
	switch state {
	case StateFailed:
		pr.FailedCases = append(pr.FailedCases, name)
	case StateSkipped:
		pr.NotRunCases = append(pr.NotRunCases, name)
	}
}

// profileResults are the profiles' results in the order of framework.Profiles.
func profileResults(profiles map[string]*ProfileResult) []ProfileResult {
	var out []ProfileResult
	for _, p := range framework.Profiles {
		if pr := profiles[string(p)]; pr != nil {
			pr.Result = pr.result()
			out = append(out, *pr)
		}
	}
	return out
}

// overall is the worst result of the profiles and the claimed features.
func overall(r *Report) string { return worst(r.Profiles, r.Features) }

// worst is the worst result of profiles and of the claimed features.
func worst(profiles []ProfileResult, features []FeatureResult) string {
	w := ResultSuccess
	rank := map[string]int{ResultSuccess: 0, ResultPartial: 1, ResultFailure: 2}
	for _, p := range profiles {
		if rank[p.Result] > rank[w] {
			w = p.Result
		}
	}
	for _, f := range features {
		if f.Claimed && rank[f.Result] > rank[w] {
			w = f.Result
		}
	}
	return w
}

// States of an Outcome.
const (
	StatePassed  = "passed"
	StateFailed  = "failed"
	StateSkipped = "skipped"
)

func (c *Counts) add(state string) {
	c.Total++
	switch state {
	case StatePassed:
		c.Passed++
	case StateFailed:
		c.Failed++
	default:
		c.NotRun++
	}
}

// result is failure when a case failed, partial when one did not run (or none ran), else success.
func (c Counts) result() string {
	switch {
	case c.Failed > 0:
		return ResultFailure
	case c.NotRun > 0 || c.Total == 0:
		return ResultPartial
	}
	return ResultSuccess
}

// YAML renders the report.
func (r *Report) YAML() ([]byte, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(raw)
}

// Write writes the report into dir.
func (r *Report) Write(dir string) error {
	raw, err := r.YAML()
	if err != nil {
		return fmt.Errorf("encode %s: %w", File, err)
	}
	return os.WriteFile(filepath.Join(dir, File), raw, 0o644)
}

// ReadJUnit reads the outcomes of a JUnit file written by volperm (Ginkgo's generator): one
// per testcase, its state and the CaseFacts of its property report.CaseProperty.
func ReadJUnit(path string) ([]Outcome, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var suites reporters.JUnitTestSuites
	if err := xml.Unmarshal(raw, &suites); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Outcome
	for _, s := range suites.TestSuites {
		for _, tc := range s.TestCases {
			oc := Outcome{Name: tc.Name, State: StatePassed}
			switch {
			case tc.Skipped != nil:
				oc.State, oc.Message = StateSkipped, tc.Skipped.Message
			case tc.Failure != nil:
				oc.State, oc.Message = StateFailed, tc.Failure.Message
			case tc.Error != nil:
				oc.State, oc.Message = StateFailed, tc.Error.Message
			}
			if tc.Properties != nil {
				oc.KnownDifference = tc.Properties.WithName(report.KnownDifferenceEntry)
				oc.Observed = tc.Properties.WithName(report.ObservedEntry)
				if v := tc.Properties.WithName(report.CaseProperty); v != "" {
					if err := json.Unmarshal([]byte(v), &oc.Facts); err != nil {
						return nil, fmt.Errorf("%s: testcase %q: property %s: %w", path, tc.Name, report.CaseProperty, err)
					}
				}
				if v := tc.Properties.WithName(report.PoolsEntry); v != "" {
					if err := json.Unmarshal([]byte(v), &oc.Pools); err != nil {
						return nil, fmt.Errorf("%s: testcase %q: property %s: %w", path, tc.Name, report.PoolsEntry, err)
					}
				}
			}
			out = append(out, oc)
		}
	}
	return out, nil
}

// names lists the outcomes' names of a state, sorted.
func names(outcomes []Outcome, state string) []string {
	var out []string
	for _, o := range outcomes {
		if o.State == state {
			out = append(out, o.Name)
		}
	}
	sort.Strings(out)
	return out
}

// describe words a result with its counts for a problem line.
func describe(result string, c Counts) string {
	return fmt.Sprintf("%s (%d passed, %d failed, %d not run of %d)", result, c.Passed, c.Failed, c.NotRun, c.Total)
}

func joinNames(ns []string) string {
	if len(ns) > 3 {
		return strings.Join(ns[:3], "; ") + fmt.Sprintf("; and %d more", len(ns)-3)
	}
	return strings.Join(ns, "; ")
}
