package main

import (
	"errors"
	"fmt"

	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
)

// runReport is `volperm report verify DIR`: the checks of a handed-in report directory
// (framework/certify Verify, docs/certify.md), each problem on its own line. Exit 0 verified, 1
// not, 2 unreadable or bad usage.
func runReport(s streams, args []string) int {
	if len(args) > 0 && (args[len(args)-1] == "-h" || args[len(args)-1] == "--help" || args[len(args)-1] == "-help") {
		fmt.Fprintf(s.out, "volperm report verify DIR: check the hand-in in DIR (conformance-report.yaml, summary.json, summary.md, junit.xml, run.log: what volperm run --implementation FILE wrote; or e2e.log and junit_01.xml, what hydrophone copied back of volperm runner, the hand-in inside): the files agree with each other and with this volperm's catalogue, the run left no case out, and every profile and claimed feature it certifies passed (docs/certify.md). Exit 0 verified, 1 not, 2 unreadable.\n")
		return exitOK
	}
	if len(args) != 2 || args[0] != "verify" {
		return fail(s, "report", usagef("want: volperm report verify DIR (a directory volperm run --implementation FILE wrote)"))
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
