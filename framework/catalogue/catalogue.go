// Package catalogue is every case volperm runs: the canonical cases under manifests/cases and
// the sweeps and matrices generated in code, in one stable order.
package catalogue

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/volperm/volperm/framework"
	caseneeds "github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/manifests"
)

// generators build the cases of each area that are generated in code.
var generators = []func() []*framework.Case{
	emptyDirCases, hostPathCases, fsGroupCases, atomicWriterCases, ownerCases, flexVolumeCases, skewCases, conditionCases, ruleCases, userPainCases, fsUserCases, absentObjectCases, nestedMountCases, boundaryCases, usernsCases, usernsNodeCases, mountCases, readOnlyCases, groupsCases, imageVolumeCases, bindMountCases, seLinuxCases,
}

// RegisterGenerator adds the generated cases of an area a fork or a test binary adds without
// editing this file (framework.RegisterArea; cmd/volperm/tinyarea_test.go). Call it before any
// run.
func RegisterGenerator(g func() []*framework.Case) { generators = append(generators, g) }

// All returns the whole catalogue, each case Complete()d, names unique: per area (in
// framework.Areas order) the canonical manifests first, then the generated cases. Every call
// builds fresh cases, so callers may change them.
func All() []*framework.Case {
	cases := manifestCases()
	for _, g := range generators {
		cases = append(cases, g()...)
	}
	rank := map[framework.Area]int{}
	for i, a := range framework.Areas {
		rank[a] = i
	}
	sort.SliceStable(cases, func(i, j int) bool { return rank[cases[i].Area] < rank[cases[j].Area] })
	for _, c := range cases {
		c.Complete()
		caseneeds.Label(c)
	}
	return cases
}

// Filter returns the cases of area, in their order.
func Filter(cases []*framework.Case, area framework.Area) []*framework.Case {
	var out []*framework.Case
	for _, c := range cases {
		if c.Area == area {
			out = append(out, c)
		}
	}
	return out
}

// manifestCases parses the embedded canonical cases. They are part of the program: a parse error
// is a bug in the build, not an input error.
func manifestCases() []*framework.Case {
	files, err := fs.Glob(manifests.Cases, "cases/*.yaml")
	if err != nil {
		panic(err)
	}
	var cases []*framework.Case
	for _, f := range files {
		data, err := fs.ReadFile(manifests.Cases, f)
		if err != nil {
			panic(err)
		}
		cs, err := framework.LoadCases(path.Join("manifests", f), data, framework.Gates{})
		if err != nil {
			panic(err)
		}
		cases = append(cases, cs...)
	}
	return cases
}

// Digest is the sha256 of the whole catalogue (every case as JSON, in order): a
// ConformanceReport names the catalogue it ran by it (framework/certify), and a verifier
// compares it with its own.
func Digest() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, c := range All() {
		if err := enc.Encode(c); err != nil {
			panic(fmt.Sprintf("catalogue case %q: %v", c.Name, err))
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
