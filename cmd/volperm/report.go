package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/rundiff"
)

// runReport is `volperm report verify DIR`: the checks of a handed-in report directory
// (framework/certify Verify, docs/certify.md), each problem on its own line. Exit 0 verified, 1
// not, 2 unreadable or bad usage.
func runReport(s streams, args []string) int {
	if len(args) > 0 && args[0] == "diff" {
		return runReportDiff(s, args[1:])
	}
	if len(args) > 0 && (args[len(args)-1] == "-h" || args[len(args)-1] == "--help" || args[len(args)-1] == "-help") {
		fmt.Fprintf(s.out, "volperm report diff OLD NEW: every case whose verdict or Observation changed between two runs' directories (exit 1 when one got worse).\n")
		fmt.Fprintf(s.out, "volperm report verify DIR: check the hand-in in DIR (conformance-report.yaml, summary.json, summary.md, junit.xml, run.log: what volperm run --implementation FILE wrote; or e2e.log and junit_01.xml, what hydrophone copied back of volperm runner, the hand-in inside): the files agree with each other and with this volperm's catalogue, the run left no case out, and every profile and claimed feature it certifies passed (docs/certify.md). Exit 0 verified, 1 not, 2 unreadable.\n")
		return exitOK
	}
	if len(args) != 2 || args[0] != "verify" {
		return fail(s, "report", usagef("want: volperm report verify DIR (a directory volperm run --implementation FILE wrote) or volperm report diff OLD NEW"))
	}
	dir := args[1]
	problems, err := certify.Verify(dir, catalogue.Digest())
	var unreadable *certify.UnreadableError
	if errors.As(err, &unreadable) {
		fmt.Fprintf(s.err, "volperm report verify: %s: unreadable: %v\n", dir, err)
		return exitUsage
	}
	if err != nil {
		return fail(s, "report verify", err)
	}
	// A note, not a problem: "release vX.Y.Z", or why no release rebuilds it (docs/certify.md
	// "Versions").
	if v, err := certify.VolpermVersion(dir); err == nil {
		fmt.Fprintf(s.out, "%s: note: %s\n", dir, certify.VersionNote(v))
	}
	if len(problems) == 0 {
		fmt.Fprintf(s.out, "%s: verified\n", dir)
		return exitOK
	}
	for _, p := range problems {
		fmt.Fprintf(s.out, "%s: %s\n", dir, p)
	}
	fmt.Fprintf(s.out, "%s: not verified: %d problem(s)\n", dir, len(problems))
	return exitFailed
}

// runReportDiff is `volperm report diff [--all] OLD NEW` (framework/rundiff): every case whose
// verdict or Observation changed between the runs of two directories (volperm run's report
// directory or hydrophone's result set), worse first. Exit 0 when none got worse, 1 when one
// did, 2 unreadable or bad usage.
func runReportDiff(s streams, args []string) int {
	fs := flag.NewFlagSet("report diff", flag.ContinueOnError)
	fs.SetOutput(s.err)
	all := fs.Bool("all", false, "list every change (default: the first 20 of each kind)")
	fs.Usage = func() {
		fmt.Fprintf(s.err, "usage: volperm report diff [--all] OLD NEW\n\nEvery case whose verdict (passed, failed, known difference, could not run, not applicable) or failure changed between two runs: OLD and NEW are directories volperm run wrote (--report-dir) or hydrophone copied back. Exit 0 when no case got worse, 1 when one did, 2 unreadable.\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 2 {
		return fail(s, "report diff", usagef("want: volperm report diff [--all] OLD NEW (two directories volperm run wrote), got %d argument(s)", fs.NArg()))
	}
	r, err := rundiff.Compare(fs.Arg(0), fs.Arg(1))
	if err != nil {
		fmt.Fprintf(s.err, "volperm report diff: %v\n", err)
		return exitUsage
	}
	limit := 20
	if *all {
		limit = 0
	}
	r.Write(s.out, limit)
	if r.Worse() > 0 {
		return exitFailed
	}
	return exitOK
}
