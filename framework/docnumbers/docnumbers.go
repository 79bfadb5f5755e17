// Package docnumbers is every count the docs quote (cases, per area and per profile, areas,
// mutants, texts, rules), taken from the code, and the markers that carry them in README.md and
// docs/*.md: `<!--volperm:NAME-->VALUE<!--/volperm-->`, invisible when rendered. A test
// (TestDocNumbers) fails when a marked value differs from the code and rewrites the docs with
// -update (`make docs`); TestSample keeps reports/sample (`make sample`) to the catalogue.
package docnumbers

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/rule"
	"github.com/volperm/volperm/framework/texts"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Numbers are the counts by marker name:
//   - cases: the catalogue's cases; cases-AREA and cases-PROFILE: those of an area, a profile;
//   - areas: the areas;
//   - mutants, mutants-hand, mutants-blind: the mutation self-test's bugs, hand-written and blind;
//   - texts: the texts of docs/texts.md; rules: the rules of docs/spec.md.
func Numbers() map[string]int {
	all := catalogue.All()
	n := map[string]int{
		"cases":   len(all),
		"areas":   len(framework.Areas),
		"mutants": len(mutant.All),
		"texts":   len(texts.Collect(all)),
		"rules":   len(rule.All),
	}
	for _, a := range framework.Areas {
		n["cases-"+string(a)] = 0
	}
	for _, p := range framework.Profiles {
		n["cases-"+string(p)] = 0
	}
	for _, c := range all {
		n["cases-"+string(c.Area)]++
		n["cases-"+string(c.Profile)]++
	}
	for _, m := range mutant.All {
		if m.IsBlind() {
			n["mutants-blind"]++
		} else {
			n["mutants-hand"]++
		}
	}
	return n
}

// marker is one marked number: <!--volperm:NAME-->VALUE<!--/volperm-->.
var marker = regexp.MustCompile(`<!--volperm:([a-z0-9-]+)-->([^<]*)<!--/volperm-->`)

// Fill returns doc with every marked value set to its number (formatted as Format does), and a
// line per marker whose value differed or whose name is no number, with its line in doc.
func Fill(doc string, n map[string]int) (string, []string) {
	var b strings.Builder
	var diffs []string
	last := 0
	for _, ix := range marker.FindAllStringSubmatchIndex(doc, -1) {
		name, old := doc[ix[2]:ix[3]], doc[ix[4]:ix[5]]
		line := strings.Count(doc[:ix[0]], "\n") + 1
		b.WriteString(doc[last:ix[0]])
		last = ix[1]
		v, ok := n[name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("line %d: marker %q names no number (known: %s)", line, name, strings.Join(Names(n), ", ")))
			b.WriteString(doc[ix[0]:ix[1]])
			continue
		}
		want := Format(v)
		if old != want {
			diffs = append(diffs, fmt.Sprintf("line %d: %s is %q, the code says %s", line, name, old, want))
		}
		b.WriteString("<!--volperm:" + name + "-->" + want + "<!--/volperm-->")
	}
	b.WriteString(doc[last:])
	return b.String(), diffs
}

// Bare finds, in doc outside markers, a count of cases or mutants typed as digits ("4009 cases",
// "103 realistic bugs"), each with its line: a number the code should give.
func Bare(doc string) []string {
	doc = marker.ReplaceAllStringFunc(doc, func(m string) string { return strings.Repeat("#", len(m)) })
	var out []string
	for _, ix := range bare.FindAllStringIndex(doc, -1) {
		out = append(out, fmt.Sprintf("line %d: %q", strings.Count(doc[:ix[0]], "\n")+1, doc[ix[0]:ix[1]]))
	}
	return out
}

// bare is a typed count: three or more digits before cases, mutants or bugs.
var bare = regexp.MustCompile(`\b[0-9][0-9,]{2,} (cases|mutants|realistic bugs|bugs|texts|rules)\b`)

// Format writes v as the docs do: digits, no separator.
func Format(v int) string { return strconv.Itoa(v) }

// Names are the names of n, sorted.
func Names(n map[string]int) []string {
	var out []string
	for k := range n {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
