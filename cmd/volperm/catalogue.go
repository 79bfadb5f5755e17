package main

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/oracle"
	"github.com/volperm/volperm/framework/rule"
)

// runCatalogue is `volperm catalogue rules`: the spec-rule coverage of the catalogue (or of -f
// files) as the oracle explains each case (docs/coverage.md). Exit 1 when a rule, or a
// condition a rule needs, has no case.
func runCatalogue(s streams, args []string) int {
	if len(args) == 0 || args[0] != "rules" {
		return fail(s, "catalogue", usagef("want a subcommand: volperm catalogue rules [--cases] [--rule ID] [--case REGEX] [-f FILE]"))
	}
	fs := flag.NewFlagSet("catalogue rules", flag.ContinueOnError)
	var cf caseFlags
	cf.register(fs)
	all := fs.Bool("cases", false, "name every case of each rule, not the first three")
	only := fs.String("rule", "", "print this rule only (an ID of docs/spec.md, e.g. walk.mask)")
	caseRE := fs.String("case", "", "instead of rules, print the rules each case whose name matches this regular expression checks")
	if code, done := parseSubcommand(s, "catalogue rules", "per rule of docs/spec.md, the cases that check it and the conditions they cover (case files go after -f)", fs, args[1:]); done {
		return code
	}
	cases, err := cf.casesOrCatalogue()
	if err != nil {
		return fail(s, "catalogue rules", err)
	}
	if *caseRE != "" {
		re, err := regexp.Compile(*caseRE)
		if err != nil {
			return fail(s, "catalogue rules", usagef("--case: %v", err))
		}
		return explainCases(s, cases, re)
	}
	cov, err := oracle.Coverage(cases)
	if err != nil {
		return fail(s, "catalogue rules", err)
	}
	if *only != "" {
		if _, ok := rule.Get(rule.ID(*only)); !ok {
			return fail(s, "catalogue rules", usagef("--rule %q: no such rule; docs/spec.md names each in brackets, e.g. walk.mask", *only))
		}
		for _, rc := range cov.Rules {
			if string(rc.Rule.ID) == *only {
				cov.Rules = []rule.RuleCoverage{rc}
			}
		}
	}
	fmt.Fprint(s.out, cov.Text(*all))
	if gaps := cov.Gaps(); len(gaps) > 0 {
		fmt.Fprintf(s.err, "volperm catalogue rules: %d gaps: %s\n", len(gaps), strings.Join(gaps, "; "))
		return exitFailed
	}
	return exitOK
}

// explainCases prints, for each case whose name matches re, the rules it checks and the
// conditions it checks them under.
func explainCases(s streams, cases []*framework.Case, re *regexp.Regexp) int {
	n := 0
	for _, c := range cases {
		if !re.MatchString(c.Name) {
			continue
		}
		n++
		_, hits := oracle.Explain(c)
		fmt.Fprintf(s.out, "%s\n", c.Name)
		conds := map[rule.ID][]string{}
		var order []rule.ID
		for _, h := range hits {
			if _, ok := conds[h.Rule]; !ok {
				order = append(order, h.Rule)
				conds[h.Rule] = []string{}
			}
			for _, cd := range h.Conds {
				if !slices.Contains(conds[h.Rule], cd.String()) {
					conds[h.Rule] = append(conds[h.Rule], cd.String())
				}
			}
		}
		for _, id := range order {
			fmt.Fprintf(s.out, "    [%s] %s\n", id, strings.Join(conds[id], " "))
		}
	}
	if n == 0 {
		return fail(s, "catalogue rules", usagef("--case %q matches no case name", re))
	}
	return exitOK
}
