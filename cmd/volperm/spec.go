package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/volperm/volperm/framework/texts"
)

// runSpec is `volperm spec texts`: every text the oracle expects of an implementation over the
// catalogue (or -f files), as Markdown (docs/texts.md is this output) or JSON.
func runSpec(s streams, args []string) int {
	if len(args) == 0 || args[0] != "texts" {
		return fail(s, "spec", usagef("want a subcommand: volperm spec texts [--json] [-f FILE]"))
	}
	fs := flag.NewFlagSet("spec texts", flag.ContinueOnError)
	var cf caseFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON (where, text, cases, example) instead of Markdown")
	if code, done := parseSubcommand(s, "spec texts", "every text the spec demands of an implementation, from the oracle's Observations of the catalogue (case files go after -f)", fs, args[1:]); done {
		return code
	}
	cases, err := cf.casesOrCatalogue()
	if err != nil {
		return fail(s, "spec texts", err)
	}
	ts := texts.Collect(cases)
	if *asJSON {
		out, err := json.MarshalIndent(ts, "", "  ")
		if err != nil {
			return fail(s, "spec texts", err)
		}
		fmt.Fprintf(s.out, "%s\n", out)
		return exitOK
	}
	fmt.Fprint(s.out, texts.Markdown(ts))
	return exitOK
}
