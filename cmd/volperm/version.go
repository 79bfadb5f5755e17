package main

import (
	"flag"
	"fmt"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/report"
)

func newVersionCommand(s streams) *command {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	return &command{
		name:    "version",
		summary: "print the versions of volperm, Go, the kernel, k8s.io/api, and the targets",
		flags:   fs,
		run:     func() int { return runVersion(s) },
	}
}

func runVersion(s streams) int {
	v := report.CurrentVersions()
	fmt.Fprintf(s.out, "volperm %s\ngo %s\nkernel %s\nk8s.io/api %s\n", v.Volperm, v.Go, v.Kernel, v.KubernetesAPI)
	for _, n := range framework.TargetNames() {
		fmt.Fprintf(s.out, "target %s: %s\n", n, framework.TargetSummary(n))
	}
	return exitOK
}
