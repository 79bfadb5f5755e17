package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/report"
	"github.com/volperm/volperm/framework/rundiff"
	"github.com/volperm/volperm/suites"
)

// rerun is what `volperm run --rerun-failed DIR` runs again (issue 54): the cases of DIR's run
// that failed (known differences too) or could not run, each cell of a release matrix as it
// was; on the target and target flags DIR's run had unless given, and its case files.
type rerun struct {
	dir string
	// keys are the cases ("[area] name", report.CaseKey), only the specs (report.WithoutTarget).
	keys, only map[string]bool
}

// applyRerun reads f.rerunFailed's run into f (its target and target flags where set names
// neither) and returns what to run again. set names the flags given on the command line.
func (f *runFlags) applyRerun(set map[string]bool) (*rerun, error) {
	dir := f.rerunFailed
	for _, name := range []string{"focus", "skip", "label-filter", "implementation", "claim"} {
		if set[name] {
			return nil, usagef("--rerun-failed runs again what failed in %s, and --%s would choose otherwise: drop one (a certification reruns the whole catalogue)", dir, name)
		}
	}
	cases, err := rundiff.Read(dir)
	if err != nil {
		return nil, usagef("--rerun-failed: %v", err)
	}
	r := &rerun{dir: dir, keys: map[string]bool{}, only: map[string]bool{}}
	for _, c := range cases {
		if c.Verdict == rundiff.Failed || c.Verdict == rundiff.Known || c.Verdict == rundiff.CouldNotRun {
			r.only[c.Name] = true
			r.keys[report.CaseKey(c.Name)] = true
		}
	}
	var sum report.Summary
	raw, err := os.ReadFile(filepath.Join(dir, suites.SummaryJSON))
	if err == nil {
		err = json.Unmarshal(raw, &sum)
	}
	if err != nil {
		return nil, usagef("--rerun-failed: %s: %v: give a directory volperm run wrote (--report-dir)", filepath.Join(dir, suites.SummaryJSON), err)
	}
	sel := sum.Selection
	if sel != nil && sel.Source != "" && sel.Source != "catalogue" && len(f.cases.files) == 0 {
		return nil, usagef("--rerun-failed: the run in %s read its cases from %s: give them again with -f", dir, sel.Source)
	}
	if !set["target"] {
		if sel == nil || sel.Target == "" {
			return nil, usagef("--rerun-failed: %s does not say its target as given (a volperm before v0.2.0 wrote it): give --target", dir)
		}
		f.target = sel.Target
		for k, v := range sel.TargetFlags {
			if !set[k] {
				f.targetOpts.opts.Flags[k] = v
			}
		}
	}
	return r, nil
}

// selects keeps the cases of r (by CaseKey) of cases, in their order.
func (r *rerun) selects(cases []*framework.Case) []*framework.Case {
	return slices.DeleteFunc(cases, func(c *framework.Case) bool { return !r.keys[report.CaseKey(suites.SpecName(c, ""))] })
}

// describe is the line a rerun prints before it starts.
func (r *rerun) describe(target string) string {
	return fmt.Sprintf("rerun of %s: %d failed or not run, on target %s", r.dir, len(r.only), target)
}

// givenFlags names the flags of fs given on the command line.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// targetFlagsGiven are the target flags of opts given, for the summary (a rerun reads them).
func targetFlagsGiven(flags map[string]string) map[string]string {
	if len(flags) == 0 {
		return nil
	}
	return maps.Clone(flags)
}
