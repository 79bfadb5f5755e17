package volperme2e

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	vpframework "github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/suites"
)

// selectCases selects as Ginkgo will: focus and skip on the full text under "[sig-storage]
// volperm", the label filter on the labels with sig-storage; nothing given selects all.
func TestSelectCases(t *testing.T) {
	all := catalogue.All()
	count := func(sc types.SuiteConfig) int {
		t.Helper()
		got, err := selectCases(all, "cluster", sc)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	hostPath := 0
	for _, c := range all {
		if c.Area == vpframework.AreaHostPath {
			hostPath++
		}
	}
	for _, tc := range []struct {
		name string
		sc   types.SuiteConfig
		want int
	}{
		{"nothing", types.SuiteConfig{}, len(all)},
		{"the container", types.SuiteConfig{FocusStrings: []string{`\[sig-storage\] volperm`}}, len(all)},
		{"an area by text", types.SuiteConfig{FocusStrings: []string{`volperm \[hostpath\] `}}, hostPath},
		{"an area by label", types.SuiteConfig{LabelFilter: "sig-storage && hostpath"}, hostPath},
		{"two focuses", types.SuiteConfig{FocusStrings: []string{`\[hostpath\]`, `no such case`}}, hostPath},
		{"skipped", types.SuiteConfig{SkipStrings: []string{`volperm`}}, 0},
		{"another SIG", types.SuiteConfig{FocusStrings: []string{`\[sig-node\]`}}, 0},
		{"the target's name", types.SuiteConfig{FocusStrings: []string{`\[target=cluster\]$`}}, len(all)},
	} {
		if got := count(tc.sc); got != tc.want {
			t.Errorf("%s: %d cases, want %d", tc.name, got, tc.want)
		}
	}
	if _, err := selectCases(all, "cluster", types.SuiteConfig{FocusStrings: []string{"("}}); err == nil || !strings.Contains(err.Error(), "-ginkgo.focus") {
		t.Errorf("a bad focus: %v", err)
	}
	if _, err := selectCases(all, "cluster", types.SuiteConfig{LabelFilter: "a &&"}); err == nil || !strings.Contains(err.Error(), "-ginkgo.label-filter") {
		t.Errorf("a bad label filter: %v", err)
	}
	// The text matched is the one Ginkgo builds: the container's, then the suites' spec name.
	if c := all[0]; !strings.HasPrefix(ContainerText+" "+suites.SpecName(c, "cluster"), "[sig-storage] volperm [") {
		t.Errorf("full text %q", ContainerText+" "+suites.SpecName(c, "cluster"))
	}
}

func TestParseProfiles(t *testing.T) {
	if got, err := parseProfiles("conformance, alpha"); err != nil || len(got) != 2 {
		t.Errorf("conformance, alpha: %v, %v", got, err)
	}
	if _, err := parseProfiles("gold"); err == nil || !strings.Contains(err.Error(), "--volperm-profile") {
		t.Errorf("gold: %v; want an error naming the flag", err)
	}
}
