// Package report turns a finished Ginkgo run of the volperm suites into what a reviewer and a CI
// read: a Summary (counts per area and per profile, every case not run with its reason, every
// failure with its first difference) written as summary.json and summary.md, the JUnit file, and
// the one-line-per-case run log.
package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/volperm/volperm/framework"
)

// Result of a whole run.
const (
	ResultPassed = "passed"
	ResultFailed = "failed"
)

// Summary is one run of the suites against one target.
type Summary struct {
	Suite    string               `json:"suite"`
	Result   string               `json:"result"`
	Versions Versions             `json:"versions"`
	Target   framework.TargetInfo `json:"target"`
	// Selection is how the run chose its cases; nil when the caller did not say.
	Selection       *Selection `json:"selection,omitempty"`
	StartTime       time.Time  `json:"startTime"`
	DurationSeconds float64    `json:"durationSeconds"`
	// SuiteFailures are failures outside any case (interrupt, a failing target Close, ...).
	SuiteFailures []string `json:"suiteFailures,omitempty"`
	Totals        Counts   `json:"totals"`
	// NotSelected counts specs the run's Ginkgo filters left out; they are in no other count.
	NotSelected int     `json:"notSelected,omitempty"`
	Areas       []Group `json:"areas"`
	Profiles    []Group `json:"profiles"`
	// Nodes are the counts per node that observed the cases (NodeEntry: the cluster target on
	// several nodes), "; "-joined when a case ran on a node of each pool.
	Nodes []Group `json:"nodes,omitempty"`
	// Pools are the counts per pool of nodes (PoolsEntry: the cluster target over node pools):
	// a case is counted once per pool, with that pool's verdict; a case no pool observed (not
	// run, or failed before any was asked) with its own outcome in every pool.
	Pools []PoolGroup `json:"pools,omitempty"`
	// Releases is the release matrix: per apiserver release, kubelet release and gates, newest
	// releases first; cases of specs without facts (a user's own suite) are not in it.
	Releases []ReleaseCell `json:"releases,omitempty"`
	// Failures lists every failed case with its first difference (or error).
	Failures []CaseResult `json:"failures"`
	// NotRun lists every case that did not run, with the reason.
	NotRun []CaseResult `json:"notRun"`
	// Timings lists the cases labelled LabelTimed that ran, with how long they took: reported,
	// never asserted.
	Timings []Timing `json:"timings,omitempty"`
	// Certification is what the reports say of a certification run's hand-in once written
	// (nil: the run certifies nothing); conformance-report.yaml is its record, not summary.json.
	Certification *Certification `json:"-"`
}

// LabelTimed is framework.LabelTimed: the cases whose durations the reports name.
const LabelTimed = framework.LabelTimed

// ObserveTimeEntry is the Ginkgo report entry a timed spec adds: the seconds (float64) the
// target took to observe the case (set-up, steps, snapshot, probes, teardown). It is also a
// property of the case in the JUnit file.
const ObserveTimeEntry = "observe-seconds"

// Timing is how long one timed case took.
type Timing struct {
	// Name is the spec's full text, as the JUnit file names it.
	Name  string `json:"name"`
	State string `json:"state"`
	// SpecSeconds is the spec's wall time, the JUnit testcase time: the oracle, the target's
	// part of the case and the comparison. A target that observes cases ahead of their specs
	// (the reference target, one area at a time in parallel) leaves its part out of it.
	SpecSeconds float64 `json:"specSeconds"`
	// ObserveSeconds is the target's observation of the case alone, when the target measured
	// it (ObserveTimeEntry).
	ObserveSeconds *float64 `json:"observeSeconds,omitempty"`
}

// Selection records how the cases of a run were chosen.
type Selection struct {
	// Source is where the cases came from: "catalogue" or the case files.
	Source      string   `json:"source"`
	Available   int      `json:"available"`
	Selected    int      `json:"selected"`
	Profiles    []string `json:"profiles,omitempty"`
	LabelFilter string   `json:"labelFilter,omitempty"`
	Focus       string   `json:"focus,omitempty"`
	Skip        string   `json:"skip,omitempty"`
	// Require is set when a case that cannot run counts as a failure (CI).
	Require bool `json:"require,omitempty"`
	// Target is the target as given (--target: "exec:/path/agent", "upstream@matrix") and
	// TargetFlags the target flags given with it: what `volperm run --rerun-failed` runs again.
	Target      string            `json:"target,omitempty"`
	TargetFlags map[string]string `json:"targetFlags,omitempty"`
	// Rerun is the report directory whose failed cases this run ran again (--rerun-failed).
	Rerun string `json:"rerun,omitempty"`
}

// Counts are the outcomes of a set of cases.
type Counts struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// NotApplicable are the cases of Skipped that are not the target's to run at all: cells of
	// releases it is not (framework.NotApplicable, docs/certify.md "Not applicable"), never
	// required, where the rest of Skipped are cases the target could not run here (issue 33).
	NotApplicable int `json:"notApplicable,omitempty"`
}

// String renders the counts as one line.
func (c Counts) String() string {
	s := fmt.Sprintf("%d cases: %d passed, %d failed, %d not run", c.Total, c.Passed, c.Failed, c.Skipped)
	if c.NotApplicable > 0 {
		s += fmt.Sprintf(" (%d of them not applicable: releases or kinds of node the target is not, or features not claimed)", c.NotApplicable)
	}
	return s
}

// CouldNotRun are the cases not run that were the target's to run: Skipped without the ones
// not applicable.
func (c Counts) CouldNotRun() int { return c.Skipped - c.NotApplicable }

func (c *Counts) add(o outcome) {
	c.Total++
	switch o {
	case passed:
		c.Passed++
	case failed:
		c.Failed++
	case skipped:
		c.Skipped++
	}
}

// Group is the counts of one area or one profile.
type Group struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Counts
}

// CaseResult is one case that failed or did not run.
type CaseResult struct {
	// Name is the spec's full text, as the JUnit file names it.
	Name    string `json:"name"`
	Area    string `json:"area,omitempty"`
	Profile string `json:"profile,omitempty"`
	// State is Ginkgo's state of the spec: failed, panicked, interrupted, timedout, aborted, skipped.
	State string `json:"state"`
	// Message is the first line of the failure (the first difference) or the reason not run.
	Message string `json:"message"`
	// KnownDifference explains a failure the target documents as a known difference.
	KnownDifference string `json:"knownDifference,omitempty"`
	// Node is the node that observed the case (NodeEntry).
	Node string `json:"node,omitempty"`
	// NotApplicable is set on a case not run that is not the target's to run (CaseFacts).
	NotApplicable bool `json:"notApplicable,omitempty"`
	// Detail is a failure's whole message (every differing line, the rules it checks), and
	// Expected and Observed its two Observations (ExpectedEntry, ObservedEntry): for index.html,
	// not summary.json (junit.xml has them).
	Detail             string `json:"-"`
	Expected, Observed string `json:"-"`
}

// CaseEntry is the Ginkgo report entry every spec of the suites adds first: the case's area and
// profile (CaseFacts), so that the reports never guess them from the order of its labels.
const CaseEntry = "volperm-case"

// CaseFacts is CaseEntry's value.
type CaseFacts struct {
	Area    string `json:"area"`
	Profile string `json:"profile"`
	// APIServerRelease and KubeletRelease are the releases of the case's cell (docs/spec.md
	// "Releases"); Gates its gates in words (GatesWords).
	APIServerRelease string `json:"apiserverRelease,omitempty"`
	KubeletRelease   string `json:"kubeletRelease,omitempty"`
	Gates            string `json:"gates,omitempty"`
	// Features are the claimable features the case belongs to (framework.CaseFeatures).
	Features []string `json:"features,omitempty"`
	// NotApplicable says why the case is not one of the target's releases (it was not run and
	// is never required: framework.NotApplicable); "" for a case of the target.
	NotApplicable string `json:"notApplicable,omitempty"`
}

// CaseProperty is the name of the JUnit property that carries a testcase's CaseFacts (Ginkgo
// writes every report entry of a spec as a property).
const CaseProperty = CaseEntry

// GatesWords names a cell's gates, sorted: "apiserver EmptyDirVolumeMode=true, kubelet
// EmptyDirVolumeMode=false"; "defaults" when the case sets none.
func GatesWords(g framework.Gates) string {
	var parts []string
	for _, comp := range []struct {
		name  string
		gates map[string]bool
	}{{"apiserver", g.APIServer}, {"kubelet", g.Kubelet}} {
		names := make([]string, 0, len(comp.gates))
		for n := range comp.gates {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%s %s=%v", comp.name, n, comp.gates[n]))
		}
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, ", ")
}

// ReleaseCell is one row of the release matrix: the cases of one apiserver release, kubelet
// release and gate setting, with how many failures are known differences of the target.
type ReleaseCell struct {
	APIServer string `json:"apiserver"`
	Kubelet   string `json:"kubelet"`
	Gates     string `json:"gates"`
	Counts
	KnownDifferences int `json:"knownDifferences,omitempty"`
}

// DifferenceEntry is the Ginkgo report entry a spec adds when the target's Observation differs
// from the oracle's: the first difference (framework.Diff), which the reports show for the
// failure, however the failure message is worded.
const DifferenceEntry = "first-difference"

// ExpectedEntry and ObservedEntry are a failed case's two Observations in full, the oracle's and
// the target's (JUnit properties, never printed on the terminal).
const (
	ExpectedEntry = "expected"
	ObservedEntry = "observed"
)

// NodeEntry is the Ginkgo report entry a spec adds when its target names the node that observed
// the case (framework.Answer's Node: the cluster target on several nodes).
const NodeEntry = "node"

// PoolsEntry is the Ginkgo report entry a spec adds when its target observed the case on
// several node pools (framework.PoolRouter): each pool's verdict ([]PoolVerdict). It is also
// a property of the case in the JUnit file, which the ConformanceReport reads.
const PoolsEntry = "volperm-pools"

// PoolVerdict is one pool's verdict on a case: passed when its Observation is the oracle's,
// else failed with the first difference or the pool's error.
type PoolVerdict struct {
	Pool    string `json:"pool"`
	Kubelet string `json:"kubelet,omitempty"`
	Node    string `json:"node"`
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
}

// States of a PoolVerdict.
const (
	PoolPassed = "passed"
	PoolFailed = "failed"
)

// PoolGroup is the counts of one pool of nodes, the nodes that observed its cases and the cases
// it failed.
type PoolGroup struct {
	Name  string   `json:"name"`
	Nodes []string `json:"nodes"`
	Counts
	FailedCases []string `json:"failedCases,omitempty"`
}

// Pools is the PoolsEntry of sr, if it has one.
func Pools(sr types.SpecReport) ([]PoolVerdict, bool) {
	return entryValue[[]PoolVerdict](sr, PoolsEntry)
}

// KnownDifferenceEntry is the Ginkgo report entry a spec adds when its failure is a known
// difference of the target; its value is the one-line explanation.
const KnownDifferenceEntry = "known-difference"

// Unexplained counts the failures that are not known differences of the target.
func (s *Summary) Unexplained() int {
	n := 0
	for _, f := range s.Failures {
		if f.KnownDifference == "" {
			n++
		}
	}
	return n + len(s.SuiteFailures)
}

// Options add what the Ginkgo report does not know.
type Options struct {
	Target    framework.TargetInfo
	Selection *Selection
}

type outcome int

const (
	passed outcome = iota
	failed
	skipped
	notSelected
)

// Build summarises a Ginkgo report of the volperm suites. A case's area and profile, and a
// failure's first difference, are the report entries its spec added (CaseEntry, DifferenceEntry).
func Build(r types.Report, opts Options) *Summary {
	s := &Summary{
		Suite:           r.SuiteDescription,
		Versions:        CurrentVersions(),
		Target:          opts.Target,
		Selection:       opts.Selection,
		StartTime:       r.StartTime,
		DurationSeconds: r.RunTime.Seconds(),
		SuiteFailures:   slices.Clone(r.SpecialSuiteFailureReasons),
		Failures:        []CaseResult{},
		NotRun:          []CaseResult{},
	}
	interrupted := slices.ContainsFunc(r.SpecialSuiteFailureReasons, func(m string) bool {
		return strings.Contains(m, "Interrupted")
	})
	areas := map[string]*Counts{}
	profiles := map[string]*Counts{}
	nodes := map[string]*Counts{}
	cells := map[[3]string]*ReleaseCell{}
	pools := poolCounter{}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			if sr.State.Is(types.SpecStateFailureStates) {
				s.SuiteFailures = append(s.SuiteFailures, fmt.Sprintf("%s: %s", sr.LeafNodeType, firstLine(failureText(sr))))
			}
			continue
		}
		o, msg := classify(sr, interrupted)
		if o == notSelected {
			s.NotSelected++
			continue
		}
		area, profile := areaAndProfile(sr)
		if d := EntryString(sr, DifferenceEntry); o == failed && d != "" {
			msg = d
		}
		s.Totals.add(o)
		counts(areas, area).add(o)
		counts(profiles, profile).add(o)
		if f, ok := caseFacts(sr); ok && o == skipped && f.NotApplicable != "" {
			s.Totals.NotApplicable++
			counts(areas, area).NotApplicable++
			counts(profiles, profile).NotApplicable++
		}
		res := CaseResult{Name: sr.FullText(), Area: area, Profile: profile, State: sr.State.String(), Message: msg, Node: EntryString(sr, NodeEntry)}
		if res.Node != "" {
			counts(nodes, res.Node).add(o)
		}
		if o == failed {
			res.KnownDifference = knownDifference(sr)
			res.Detail = strings.TrimSpace(failureText(sr))
			res.Expected, res.Observed = EntryString(sr, ExpectedEntry), EntryString(sr, ObservedEntry)
		}
		if f, ok := caseFacts(sr); ok && o == skipped && f.NotApplicable != "" {
			res.NotApplicable = true
		}
		pools.add(sr, o)
		if f, ok := caseFacts(sr); ok && f.APIServerRelease != "" {
			k := [3]string{f.APIServerRelease, f.KubeletRelease, f.Gates}
			if cells[k] == nil {
				cells[k] = &ReleaseCell{APIServer: k[0], Kubelet: k[1], Gates: k[2]}
			}
			cells[k].add(o)
			if res.NotApplicable {
				cells[k].NotApplicable++
			}
			if res.KnownDifference != "" {
				cells[k].KnownDifferences++
			}
		}
		switch o {
		case failed:
			s.Failures = append(s.Failures, res)
		case skipped:
			s.NotRun = append(s.NotRun, res)
		}
		if o != skipped && slices.Contains(sr.Labels(), LabelTimed) {
			s.Timings = append(s.Timings, Timing{Name: sr.FullText(), State: sr.State.String(),
				SpecSeconds: sr.RunTime.Seconds(), ObserveSeconds: observeSeconds(sr)})
		}
	}
	for _, a := range framework.Areas {
		if c, ok := areas[string(a)]; ok {
			s.Areas = append(s.Areas, Group{Name: string(a), Description: framework.AreaDescription(a), Counts: *c})
		}
	}
	if c, ok := areas[""]; ok {
		s.Areas = append(s.Areas, Group{Name: "(no area)", Counts: *c})
	}
	for _, p := range framework.Profiles {
		if c, ok := profiles[string(p)]; ok {
			s.Profiles = append(s.Profiles, Group{Name: string(p), Counts: *c})
		}
	}
	if c, ok := profiles[""]; ok {
		s.Profiles = append(s.Profiles, Group{Name: "(no profile)", Counts: *c})
	}
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		s.Nodes = append(s.Nodes, Group{Name: n, Counts: *nodes[n]})
	}
	s.Pools = pools.groups()
	for _, c := range cells {
		s.Releases = append(s.Releases, *c)
	}
	sort.Slice(s.Releases, func(i, j int) bool {
		a, b := s.Releases[i], s.Releases[j]
		if a.APIServer != b.APIServer {
			return releaseAfter(a.APIServer, b.APIServer)
		}
		if a.Kubelet != b.Kubelet {
			return releaseAfter(a.Kubelet, b.Kubelet)
		}
		return a.Gates < b.Gates
	})
	s.Result = ResultPassed
	if !r.SuiteSucceeded || s.Totals.Failed > 0 || len(s.SuiteFailures) > 0 {
		s.Result = ResultFailed
	}
	return s
}

// poolCounter counts the cases per pool: those with pool verdicts as each pool judged them, the
// others (not run, or failed before any pool was asked), once the pools are known, with their
// own outcome in every pool of their kubelet release (a release matrix's cells are pools of
// different kubelets: a case of one cell is no other cell's).
type poolCounter struct {
	order   []string
	pools   map[string]*PoolGroup
	kubelet map[string]string
	nodes   map[string]map[string]bool
	others  []otherCase
}

type otherCase struct {
	o             outcome
	name, kubelet string
}

func (pc *poolCounter) add(sr types.SpecReport, o outcome) {
	vs, ok := Pools(sr)
	if !ok {
		f, _ := caseFacts(sr)
		pc.others = append(pc.others, otherCase{o, sr.FullText(), f.KubeletRelease})
		return
	}
	if pc.pools == nil {
		pc.pools, pc.kubelet, pc.nodes = map[string]*PoolGroup{}, map[string]string{}, map[string]map[string]bool{}
	}
	for _, v := range vs {
		g := pc.pools[v.Pool]
		if g == nil {
			g = &PoolGroup{Name: v.Pool}
			pc.pools[v.Pool], pc.nodes[v.Pool] = g, map[string]bool{}
			pc.kubelet[v.Pool] = v.Kubelet
			pc.order = append(pc.order, v.Pool)
		}
		pc.nodes[v.Pool][v.Node] = true
		if v.State == PoolPassed {
			g.add(passed)
		} else {
			g.add(failed)
			g.FailedCases = append(g.FailedCases, sr.FullText())
		}
	}
}

// groups are the pools in the order they were first seen; none when no case had verdicts.
func (pc *poolCounter) groups() []PoolGroup {
	var out []PoolGroup
	for _, name := range pc.order {
		g := pc.pools[name]
		for _, oc := range pc.others {
			if !SameKubelet(oc.kubelet, pc.kubelet[name]) {
				continue
			}
			g.add(oc.o)
			if oc.o == failed {
				g.FailedCases = append(g.FailedCases, oc.name)
			}
		}
		g.Nodes = slices.Sorted(maps.Keys(pc.nodes[name]))
		out = append(out, *g)
	}
	return out
}

// SameKubelet says whether a case of the kubelet release cell ("v1.37"; "" unknown) belongs to a
// pool whose kubelet is release pool ("v1.37.1"; "" unknown): unknown belongs everywhere.
func SameKubelet(cell, pool string) bool {
	return cell == "" || pool == "" || framework.MinorRelease(pool) == cell
}

// releaseAfter reports whether release a ("v1.37") is newer than b.
func releaseAfter(a, b string) bool {
	minor := func(r string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(r, "v1."))
		return n
	}
	return minor(a) > minor(b)
}

func counts(m map[string]*Counts, key string) *Counts {
	if m[key] == nil {
		m[key] = &Counts{}
	}
	return m[key]
}

// classify gives a spec's outcome and its one-line message.
func classify(sr types.SpecReport, interrupted bool) (outcome, string) {
	switch {
	case sr.State == types.SpecStatePassed:
		return passed, ""
	case sr.State.Is(types.SpecStateFailureStates):
		return failed, firstLine(failureText(sr))
	case sr.State == types.SpecStatePending:
		return skipped, "pending"
	case sr.Failure.Message != "":
		// A Skip(reason) from the spec: the target cannot run the case here.
		return skipped, firstLine(sr.Failure.Message)
	case interrupted:
		// Ginkgo skips, without a message, every spec after an interrupt.
		return skipped, "the run was interrupted before this case"
	}
	return notSelected, ""
}

func failureText(sr types.SpecReport) string {
	msg := sr.Failure.Message
	if sr.State == types.SpecStatePanicked && sr.Failure.ForwardedPanic != "" {
		msg = fmt.Sprintf("%s: %s", msg, sr.Failure.ForwardedPanic)
	}
	return msg
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// areaAndProfile are the spec's CaseEntry; a spec without one (a suite of a user's own that
// registered specs without the suites) falls back to its first labels naming a known area and a
// known profile.
func areaAndProfile(sr types.SpecReport) (area, profile string) {
	if f, ok := caseFacts(sr); ok {
		return f.Area, f.Profile
	}
	for _, l := range sr.Labels() {
		if area == "" && slices.Contains(framework.Areas, framework.Area(l)) {
			area = l
		}
		if profile == "" && slices.Contains(framework.Profiles, framework.Profile(l)) {
			profile = l
		}
	}
	return area, profile
}

// caseFacts is the CaseEntry of sr, if it has one.
func caseFacts(sr types.SpecReport) (CaseFacts, bool) { return entryValue[CaseFacts](sr, CaseEntry) }

// entryValue is the value of sr's report entry name: the value itself in the process that
// added it, else decoded from its JSON (a report read back, or from another Ginkgo process).
func entryValue[T any](sr types.SpecReport, name string) (T, bool) {
	for _, e := range sr.ReportEntries {
		if e.Name != name {
			continue
		}
		if v, ok := e.GetRawValue().(T); ok {
			return v, true
		}
		var v T
		if err := json.Unmarshal([]byte(e.Value.AsJSON), &v); err != nil {
			continue
		}
		return v, true
	}
	var zero T
	return zero, false
}

// JSON renders the summary as indented JSON.
func (s *Summary) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return append(b, '\n'), nil
}

// WriteJSON writes the summary as JSON to path.
func (s *Summary) WriteJSON(path string) error {
	b, err := s.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// observeSeconds is the value of the spec's ObserveTimeEntry, nil when it has none.
func observeSeconds(sr types.SpecReport) *float64 {
	for _, e := range sr.ReportEntries {
		if e.Name != ObserveTimeEntry {
			continue
		}
		if v, ok := e.GetRawValue().(float64); ok {
			return &v
		}
		// A report read back from JSON keeps only the value's JSON.
		if v, err := strconv.ParseFloat(e.Value.AsJSON, 64); err == nil {
			return &v
		}
	}
	return nil
}

// knownDifference is the explanation a failed spec recorded as a report entry, or "".
func knownDifference(sr types.SpecReport) string { return EntryString(sr, KnownDifferenceEntry) }

// EntryString is the string value of the spec's report entry name, "" when it has none.
func EntryString(sr types.SpecReport, name string) string {
	for _, e := range sr.ReportEntries {
		if e.Name == name {
			return e.StringRepresentation()
		}
	}
	return ""
}

// The tags a spec's name ends with (suites' itText): its release cell, then its target.
var (
	targetTag = regexp.MustCompile(` \[target=[^\]]*\]`)
	cellTag   = regexp.MustCompile(` \[apiserver=[^\]]* kubelet=[^\]]*\]`)
)

// WithoutTarget is a spec's name without its target tag: the same case of a run on another
// target (two releases of upstream, kind and a vendor's cluster) has the same one.
func WithoutTarget(spec string) string {
	return strings.TrimSpace(targetTag.ReplaceAllString(spec, ""))
}

// CaseKey is a spec's name without its target tag and release cell, "[area] name": the case a
// spec of any cell and target is of.
func CaseKey(spec string) string {
	return strings.TrimSpace(cellTag.ReplaceAllString(WithoutTarget(spec), ""))
}
