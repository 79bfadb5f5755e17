package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/oracle"
)

// expectFlags are the flags of `volperm expect`.
type expectFlags struct {
	cases caseFlags
}

func newExpectCommand(s streams) *command {
	f := &expectFlags{}
	fs := flag.NewFlagSet("expect", flag.ContinueOnError)
	f.cases.register(fs)
	return &command{
		name:    "expect",
		summary: "print the Observation the spec demands for each case of -f FILE (the oracle; no syscalls)",
		flags:   fs,
		run:     func() int { return runExpect(s, f) },
	}
}

func runExpect(s streams, f *expectFlags) int {
	if len(f.cases.files) == 0 {
		return fail(s, "expect", needFiles("expect"))
	}
	cases, err := f.cases.load()
	if err != nil {
		return fail(s, "expect", err)
	}
	obs := make([]*framework.Observation, 0, len(cases))
	for _, c := range cases {
		obs = append(obs, oracle.Expect(c))
	}
	if err := writeObservations(s.out, obs); err != nil {
		return fail(s, "expect", err)
	}
	return exitOK
}

// writeObservations prints one Observation as a JSON object, several as a JSON list
// (docs/observation.md).
func writeObservations(w io.Writer, obs []*framework.Observation) error {
	for _, o := range obs {
		o.Normalize()
	}
	if len(obs) == 1 {
		_, err := w.Write(obs[0].JSON())
		return err
	}
	b, err := json.MarshalIndent(obs, "", "  ")
	if err != nil {
		return fmt.Errorf("encode observations: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
