package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/needs"
	"github.com/volperm/volperm/nodeimpl/gates"
	"github.com/volperm/volperm/suites"
)

// fileList is a repeatable -f flag.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// caseFlags are the flags that load cases from files.
type caseFlags struct {
	files          fileList
	apiserverGates string
	kubeletGates   string
}

func (c *caseFlags) register(flags *flag.FlagSet) {
	flags.Var(&c.files, "f", "`FILE` of cases: YAML or JSON documents separated by ---, each a Case or a plain Pod; repeatable")
	flags.StringVar(&c.apiserverGates, "apiserver-gates", "", "kube-apiserver feature gates for plain Pod documents, e.g. EmptyDirVolumeMode=true")
	flags.StringVar(&c.kubeletGates, "kubelet-gates", "", "kubelet feature gates for plain Pod documents, e.g. EmptyDirVolumeMode=true,PreservePermissions=false")
}

// gates parses the two gate flags (Kubernetes' Name=true,Other=false syntax).
func (c *caseFlags) gates() (framework.Gates, error) {
	var g framework.Gates
	for _, f := range []struct {
		flag string
		spec string
		into *map[string]bool
	}{
		{"--apiserver-gates", c.apiserverGates, &g.APIServer},
		{"--kubelet-gates", c.kubeletGates, &g.Kubelet},
	} {
		set, err := gates.Parse(f.spec)
		if err != nil {
			return framework.Gates{}, usagef("%s: %v", f.flag, err)
		}
		if len(set) > 0 {
			*f.into = set
		}
	}
	return g, nil
}

// casesOrCatalogue is the cases of the -f files, or the whole catalogue when there are none.
func (c *caseFlags) casesOrCatalogue() ([]*framework.Case, error) {
	if len(c.files) == 0 {
		return catalogue.All(), nil
	}
	return c.load()
}

// load reads every -f file; errors are usage errors naming the file and field.
func (c *caseFlags) load() ([]*framework.Case, error) {
	defaults, err := c.gates()
	if err != nil {
		return nil, err
	}
	var all []*framework.Case
	for _, path := range c.files {
		cases, err := framework.LoadFile(path, defaults)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("-f %s: no such file: give the path of a case file (e.g. manifests/cases/emptydir.yaml)", path)
		}
		if err != nil {
			return nil, usageError{err.Error()}
		}
		for _, cs := range cases {
			if err := suites.CheckLabels(cs); err != nil {
				return nil, usagef("%s: %v", path, err)
			}
			// What it needs beyond a stock cluster, as the catalogue's cases say it (issue 35).
			needs.Label(cs)
		}
		all = append(all, cases...)
	}
	return all, nil
}

// needFiles is the usage error of a command run without -f.
func needFiles(cmd string) error {
	return usagef("no case file: give one with -f FILE (e.g. volperm %s -f manifests/cases/emptydir.yaml)", cmd)
}

// targetFlags are the flags that build a target, shared by run, observe and diff.
type targetFlags struct {
	opts framework.TargetOptions
}

// register adds --work-dir and the flags the targets registered (framework.RegisterTargetFlag).
func (t *targetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.opts.WorkDir, "work-dir", "", "where the target creates its temporary roots (default $TMPDIR)")
	t.opts.Flags = map[string]string{}
	for _, f := range framework.TargetFlags() {
		usage := f.Usage + " (target " + f.Owner + ")"
		if f.Bool {
			fs.Var(boolTargetFlag{t.opts.Flags, f.Name}, f.Name, usage)
			continue
		}
		fs.Func(f.Name, usage, func(v string) error {
			t.opts.Flags[f.Name] = v
			return nil
		})
	}
}

// boolTargetFlag is a target flag without a value: given, its value is "true".
type boolTargetFlag struct {
	values map[string]string
	name   string
}

func (b boolTargetFlag) String() string {
	if b.values == nil {
		return ""
	}
	return b.values[b.name]
}

func (b boolTargetFlag) Set(v string) error {
	if v != "true" && v != "false" {
		return fmt.Errorf("want true or false, not %q", v)
	}
	if v == "true" {
		b.values[b.name] = v
	} else {
		delete(b.values, b.name)
	}
	return nil
}

func (b boolTargetFlag) IsBoolFlag() bool { return true }
