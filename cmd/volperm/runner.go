package main

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/suites"
)

// `volperm runner` is volperm as a conformance image's entrypoint (docs/certify.md "Sonobuoy and
// hydrophone"): configured by the environment the Kubernetes conformance image's go-runner reads
// (kubernetes cluster/images/conformance/go-runner), it runs the catalogue and leaves in the
// results dir what Sonobuoy's worker and hydrophone collect.
const (
	// EnvResultsDir is where the results go (Sonobuoy forces it to its results dir).
	envResultsDir = "RESULTS_DIR"
	// envSonobuoyResultsDir is Sonobuoy's name for the same dir.
	envSonobuoyResultsDir = "SONOBUOY_RESULTS_DIR"
	defaultResultsDir     = "/tmp/results"
	envFocus              = "E2E_FOCUS"
	envSkip               = "E2E_SKIP"
	envParallel           = "E2E_PARALLEL"
	// runnerLog, runnerJUnit, runnerTarball and runnerDone are the files of the contract:
	// hydrophone copies e2e.log and junit_01.xml back; Sonobuoy's worker waits for done, which
	// names the tarball of every result file (result-format junit reads its *.xml files).
	runnerLog     = "e2e.log"
	runnerJUnit   = "junit_01.xml"
	runnerTarball = "e2e.tar.gz"
	runnerDone    = "done"
)

// conformanceFocus is the go-runner's and hydrophone's default E2E_FOCUS: upstream's
// conformance tests. volperm's spec names carry no "[Conformance]": it selects the conformance
// profile instead.
var conformanceFocus = map[string]bool{`\[Conformance\]`: true, `[Conformance]`: true}

func init() {
	framework.RegisterEnv(
		framework.EnvVar{Name: envResultsDir, Owner: "runner", Meaning: "where `volperm runner` writes e2e.log, junit_01.xml, the reports, e2e.tar.gz and done (default $" + envSonobuoyResultsDir + ", else " + defaultResultsDir + ")"},
		framework.EnvVar{Name: envSonobuoyResultsDir, Owner: "runner", Meaning: "Sonobuoy's results dir, used when " + envResultsDir + " is empty"},
		framework.EnvVar{Name: envFocus, Owner: "runner", Meaning: "--focus of the run; `\\[Conformance\\]` (the conformance image's default) selects the conformance profile"},
		framework.EnvVar{Name: envSkip, Owner: "runner", Meaning: "--skip of the run"},
		framework.EnvVar{Name: envParallel, Owner: "runner", Meaning: "probe pods started at once on the cluster target: a number, or y/true for the target's default; n/false runs them one after another"},
	)
}

func newRunnerCommand(s streams) *command {
	f := &runFlags{}
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	fs.StringVar(&f.target, "target", "cluster", "implementation under test (the cluster the runner's pod runs in, by default): "+targetList())
	fs.StringVar(&f.profiles, "profile", "", "profiles to run, comma-separated ("+profileList()+"); default all")
	f.targetOpts.register(fs)
	f.registerVerdictFlags(fs)
	return &command{
		name:    "runner",
		summary: "volperm as a conformance image (Sonobuoy plugin, hydrophone): E2E_FOCUS, E2E_SKIP, E2E_PARALLEL, RESULTS_DIR in; e2e.log, junit_01.xml, e2e.tar.gz and done out",
		flags:   fs,
		env:     true,
		run:     func() int { return runRunner(s, f) },
	}
}

// runRunner runs `volperm run` as the environment says, with everything it prints also in
// e2e.log, then leaves the files of the contract.
func runRunner(s streams, f *runFlags) int {
	dir := os.Getenv(envResultsDir)
	if dir == "" {
		dir = os.Getenv(envSonobuoyResultsDir)
	}
	if dir == "" {
		dir = defaultResultsDir
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fail(s, "runner", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(s, "runner", fmt.Errorf("%s: %w", envResultsDir, err))
	}
	f.reportDir = dir
	f.focus, f.skip = os.Getenv(envFocus), os.Getenv(envSkip)
	if conformanceFocus[f.focus] {
		f.focus, f.labelFilter = "", string(framework.ProfileConformance)
	}
	if v := os.Getenv(envParallel); v != "" {
		n, err := parallelPods(v)
		if err != nil {
			return fail(s, "runner", usagef("%s=%q: %v", envParallel, v, err))
		}
		if n > 0 {
			f.targetOpts.opts.Flags[cluster.FlagParallel] = strconv.Itoa(n)
		}
	}
	log, err := os.Create(filepath.Join(dir, runnerLog))
	if err != nil {
		return fail(s, "runner", err)
	}
	defer log.Close()
	start := time.Now()
	code, teeErr := teeOutput(log, func() int {
		code := runRun(s, f)
		result := "Passed"
		if code != exitOK {
			result = "Failed"
		}
		// The ginkgo CLI's last lines, which hydrophone waits for in the log.
		fmt.Fprintf(s.out, "\nGinkgo ran 1 suite in %s\nTest Suite %s\n", time.Since(start).Round(time.Millisecond), result)
		return code
	})
	if teeErr != nil {
		fmt.Fprintf(s.err, "volperm runner: %s: %v\n", runnerLog, teeErr)
	}
	// Also after a run that could not start (bad input: exit 2): the worker then gets e2e.log
	// with the reason instead of waiting for a done file that never comes.
	if err := finishResults(dir, code == exitOK); err != nil {
		fmt.Fprintf(s.err, "volperm runner: %v\n", err)
		return max(code, exitFailed)
	}
	return code
}

// parallelPods reads E2E_PARALLEL: a number of pods, y/true (0: the target's default), n/false (1).
func parallelPods(v string) (int, error) {
	switch strings.ToLower(v) {
	case "y", "yes", "true":
		return 0, nil
	case "n", "no", "false":
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errors.New("want a number of pods, y/true or n/false")
	}
	return n, nil
}

// teeOutput runs fn with this process's stdout and stderr (file descriptors 1 and 2, so Ginkgo's
// reporter and child processes too) copied into log as well as to where they went.
func teeOutput(log io.Writer, fn func() int) (int, error) {
	outFD, err := unix.Dup(1)
	if err != nil {
		return fn(), err
	}
	errFD, err := unix.Dup(2)
	if err != nil {
		unix.Close(outFD)
		return fn(), err
	}
	r, w, err := os.Pipe()
	if err != nil {
		unix.Close(outFD)
		unix.Close(errFD)
		return fn(), err
	}
	console := os.NewFile(uintptr(outFD), "stdout")
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.MultiWriter(console, log), r)
		copied <- err
	}()
	_ = unix.Dup3(int(w.Fd()), 1, 0)
	_ = unix.Dup3(int(w.Fd()), 2, 0)
	code := fn()
	_ = unix.Dup3(outFD, 1, 0)
	_ = unix.Dup3(errFD, 2, 0)
	w.Close()
	err = <-copied
	r.Close()
	console.Close()
	unix.Close(errFD)
	return code, err
}

// finishResults copies junit.xml to junit_01.xml, tars every result file into e2e.tar.gz and
// names it in done, last (the go-runner's order: Sonobuoy's worker takes done as the end).
// A run that passed must have written its JUnit report (needJUnit).
func finishResults(dir string, needJUnit bool) error {
	junit, err := os.ReadFile(filepath.Join(dir, suites.JUnitFile))
	switch {
	case err == nil:
		if err := os.WriteFile(filepath.Join(dir, runnerJUnit), junit, 0o644); err != nil {
			return err
		}
	case needJUnit || !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no JUnit report was written: %w", err)
	}
	tarball := filepath.Join(dir, runnerTarball)
	if err := tarDir(dir, tarball); err != nil {
		return fmt.Errorf("%s: %w", runnerTarball, err)
	}
	return os.WriteFile(filepath.Join(dir, runnerDone), []byte(tarball), 0o644)
}

// tarDir writes every regular file below dir (but the tarball and done) into a gzipped tar.
func tarDir(dir, tarball string) (err error) {
	out, err := os.Create(tarball)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	walkErr := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || p == tarball || p == filepath.Join(dir, runnerDone) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = rel
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = io.Copy(tw, in)
		return err
	})
	return errors.Join(walkErr, tw.Close(), gz.Close())
}
