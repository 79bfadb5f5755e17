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
	"github.com/volperm/volperm/framework/incluster"
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
	// runnerReleased ends a --hold (volperm runner --release, after volperm cluster retrieve
	// fetched the results).
	runnerReleased = "released"
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

// runnerModes are `volperm runner`'s flags for an in-cluster run (framework/incluster): hold the
// pod after the run until the results are fetched, fetch them, release the hold.
type runnerModes struct {
	hold           time.Duration
	fetch, release bool
}

func newRunnerCommand(s streams) *command {
	f := &runFlags{}
	m := &runnerModes{}
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	fs.DurationVar(&m.hold, incluster.FlagHold, 0, "after the run, keep running until `volperm runner --release` or this long (an in-cluster run's pod: volperm cluster retrieve fetches its results meanwhile)")
	fs.BoolVar(&m.fetch, incluster.FlagFetch, false, "write the finished run's e2e.tar.gz to stdout and exit (exit 3 while the run goes on)")
	fs.BoolVar(&m.release, incluster.FlagRelease, false, "end the --hold of the run in this results dir and exit")
	fs.StringVar(&f.target, "target", "cluster", "implementation under test (the cluster the runner's pod runs in, by default): "+targetList())
	fs.StringVar(&f.profiles, "profile", "", "profiles to run, comma-separated ("+framework.ProfileList()+"); default all")
	fs.StringVar(&f.labelFilter, "label-filter", "", `Ginkgo label filter on area, profile and case labels, e.g. "hostpath && !runtime-defined" (with E2E_FOCUS \[Conformance\]: and conformance)`)
	f.targetOpts.register(fs)
	f.registerVerdictFlags(fs)
	return &command{
		name:    "runner",
		summary: "volperm as a conformance image (Sonobuoy plugin, hydrophone): E2E_FOCUS, E2E_SKIP, E2E_PARALLEL, RESULTS_DIR in; e2e.log, junit_01.xml, e2e.tar.gz and done out",
		flags:   fs,
		env:     true,
		run: func() int {
			switch {
			case m.fetch:
				return fetchResults(s)
			case m.release:
				return releaseResults(s)
			}
			code := runRunner(s, f)
			if m.hold > 0 {
				holdResults(s, m.hold)
			}
			return code
		},
	}
}

// runRunner runs `volperm run` as the environment says, with everything it prints also in
// e2e.log, then leaves the files of the contract.
func runRunner(s streams, f *runFlags) int {
	dir, err := resultsDir()
	if err != nil {
		return fail(s, "runner", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(s, "runner", fmt.Errorf("%s: %w", envResultsDir, err))
	}
	f.reportDir = dir
	f.focus, f.skip = os.Getenv(envFocus), os.Getenv(envSkip)
	if conformanceFocus[f.focus] {
		filter := string(framework.ProfileConformance)
		if f.labelFilter != "" {
			filter += " && (" + f.labelFilter + ")"
		}
		f.focus, f.labelFilter = "", filter
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

// resultsDir is RESULTS_DIR, else SONOBUOY_RESULTS_DIR, else /tmp/results, absolute.
func resultsDir() (string, error) {
	dir := os.Getenv(envResultsDir)
	if dir == "" {
		dir = os.Getenv(envSonobuoyResultsDir)
	}
	if dir == "" {
		dir = defaultResultsDir
	}
	return filepath.Abs(dir)
}

// fetchResults is `volperm runner --fetch`: the tarball done names, to stdout; exit
// incluster.ExitNotDone while there is no done file.
func fetchResults(s streams) int {
	dir, err := resultsDir()
	if err != nil {
		return fail(s, "runner --fetch", err)
	}
	done, err := os.ReadFile(filepath.Join(dir, runnerDone))
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(s.err, "volperm runner --fetch: the run in %s has not finished\n", dir)
		return incluster.ExitNotDone
	}
	if err != nil {
		return fail(s, "runner --fetch", err)
	}
	f, err := os.Open(string(done))
	if err != nil {
		return fail(s, "runner --fetch", err)
	}
	defer f.Close()
	if _, err := io.Copy(s.out, f); err != nil {
		return fail(s, "runner --fetch", err)
	}
	return exitOK
}

// releaseResults is `volperm runner --release`: the holding runner may end.
func releaseResults(s streams) int {
	dir, err := resultsDir()
	if err != nil {
		return fail(s, "runner --release", err)
	}
	if err := os.WriteFile(filepath.Join(dir, runnerReleased), nil, 0o644); err != nil {
		return fail(s, "runner --release", err)
	}
	return exitOK
}

// holdResults waits until the results are released, or hold has passed.
func holdResults(s streams, hold time.Duration) {
	dir, err := resultsDir()
	if err != nil {
		return
	}
	fmt.Fprintf(s.err, "volperm runner: holding the results in %s until they are fetched (volperm cluster retrieve), %s at most\n", dir, hold)
	deadline := time.Now().Add(hold)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(dir, runnerReleased)); err == nil {
			fmt.Fprintln(s.err, "volperm runner: results fetched")
			return
		}
		time.Sleep(time.Second)
	}
	fmt.Fprintf(s.err, "volperm runner: nobody fetched the results within %s\n", hold)
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
		if err != nil || !d.Type().IsRegular() || p == tarball || p == filepath.Join(dir, runnerDone) || p == filepath.Join(dir, runnerReleased) {
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
