package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/certify"
	"github.com/volperm/volperm/framework/cluster"
	"github.com/volperm/volperm/framework/incluster"
	probeimage "github.com/volperm/volperm/framework/probe/image"
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
	// envExtraArgs are the e2e.test flags hydrophone's --extra-args passes; the runner takes
	// --host=URL, e2e.test's apiserver (a cluster without kube-proxy cannot reach the kubernetes
	// Service's cluster IP).
	envExtraArgs = "E2E_EXTRA_ARGS"
	// runnerLog, runnerJUnit, runnerTarball and runnerDone are the files of the contract:
	// hydrophone copies e2e.log and junit_01.xml back; Sonobuoy's worker waits for done, which
	// names the tarball of every result file (result-format junit reads its *.xml files).
	runnerLog     = "e2e.log"
	runnerJUnit   = certify.RunnerJUnit
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
		framework.EnvVar{Name: envExtraArgs, Owner: "runner", Meaning: "e2e.test arguments (hydrophone --extra-args): --host=https://HOST:PORT, the apiserver to reach (a cluster without kube-proxy); --volperm-probe-image, --volperm-nodes, --volperm-flex-driver, --volperm-vendor, --volperm-product, --volperm-version, --volperm-url, --volperm-contact, --volperm-claim (volperm runner: extraArgs)"},
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
		// A profile, not a filter: a conformance run is a certification of the profile
		// (`volperm report verify` refuses a run that left cases out by a filter). --profile,
		// when given, is the more precise choice and stays.
		if f.profiles == "" {
			f.profiles = string(framework.ProfileConformance)
		}
		f.focus = ""
	}
	log, err := os.Create(filepath.Join(dir, runnerLog))
	if err != nil {
		return fail(s, "runner", err)
	}
	defer log.Close()
	start := time.Now()
	code, teeErr := teeOutput(log, func() int {
		// What the environment asks is checked inside the log: a runner such as hydrophone
		// waits for e2e.log's last lines and a JUnit, also when the run cannot start.
		code := runnerEnv(s, f)
		if code == exitOK {
			code = runRun(s, f)
		}
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

// runnerEnv applies E2E_EXTRA_ARGS and E2E_PARALLEL to f, and gives the cluster target its
// probe image when no flag did: the runner's own image (ownImage).
func runnerEnv(s streams, f *runFlags) int {
	extra, err := extraArgs(os.Getenv(envExtraArgs))
	if err != nil {
		return fail(s, "runner", usagef("%s: %v", envExtraArgs, err))
	}
	if extra.flexDriver && f.target == cluster.Name {
		f.target = cluster.Name + ":flex-driver"
	}
	if framework.TargetName(f.target) == cluster.Name && f.targetOpts.opts.Flags[cluster.FlagProbeImage] == "" {
		// Under hydrophone no flag reaches the runner: its probe pods run its own image
		// (the runner image holds /volperm-probe).
		img := extra.probeImage
		if img == "" {
			if img, err = ownImage(); err != nil {
				return fail(s, "runner", fmt.Errorf("no --probe-image: %w; pass it as %s=--volperm-probe-image=IMAGE", err, envExtraArgs))
			}
		}
		f.targetOpts.opts.Flags[cluster.FlagProbeImage] = img
	}
	if extra.nodes != "" {
		f.targetOpts.opts.Flags[cluster.FlagNodes] = extra.nodes
	}
	if extra.implementation != nil {
		f.named = extra.implementation
	}
	if len(extra.claims) > 0 {
		if f.claims != "" {
			extra.claims = append([]string{f.claims}, extra.claims...)
		}
		f.claims = strings.Join(extra.claims, ",")
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
	return exitOK
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
		// A certification run (a ConformanceReport was written) carries its hand-in in
		// junit_01.xml, the file hydrophone copies back besides e2e.log.
		if _, statErr := os.Stat(filepath.Join(dir, certify.File)); statErr == nil {
			if junit, err = certify.EmbedHandIn(junit, dir); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, runnerJUnit), junit, 0o644); err != nil {
			return err
		}
	case needJUnit || !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no JUnit report was written: %w", err)
	default:
		// The run did not start (its reason is in e2e.log): a JUnit of one failure, which a
		// runner such as hydrophone fetches and reports rather than failing on its absence.
		const notStarted = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="1"><testsuite name="volperm" tests="1" failures="1"><testcase name="volperm runner: the run did not start" classname="volperm"><failure message="the run did not start: its reason is in e2e.log"></failure></testcase></testsuite></testsuites>
`
		if err := os.WriteFile(filepath.Join(dir, runnerJUnit), []byte(notStarted), 0o644); err != nil {
			return err
		}
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

// isVolpermImage: the image's repository is named volperm (volperm/volperm:TAG, as built, or
// REGISTRY/PATH/volperm:TAG, retagged), not merely under a volperm/ path.
func isVolpermImage(ref string) bool {
	repo := probeimage.Repository(ref)
	return repo == "volperm" || strings.HasSuffix(repo, "/volperm")
}

// runnerExtra is what E2E_EXTRA_ARGS gave the runner.
type runnerExtra struct {
	probeImage string
	// implementation is --volperm-vendor/product/version/url/contact, nil when none was given.
	implementation *certify.Implementation
	claims         []string
	// flexDriver is --volperm-flex-driver=true: the cluster target installs the harness's
	// flexVolume driver on the nodes (cluster:flex-driver), so that the flexVolume set-up
	// cases run.
	flexDriver bool
	// nodes is --volperm-nodes=SELECTOR: the label selector of the nodes the cases run on (the
	// cluster target's --nodes; the flag of volperm's e2e binary).
	nodes string
}

// implementationArgs are the E2E_EXTRA_ARGS naming the implementation certified, each setting
// a field of --implementation's file (hydrophone passes no file into the runner's pod).
var implementationArgs = map[string]func(*certify.Implementation, string){
	"--volperm-vendor":  func(im *certify.Implementation, v string) { im.Vendor = v },
	"--volperm-product": func(im *certify.Implementation, v string) { im.Product = v },
	"--volperm-version": func(im *certify.Implementation, v string) { im.Version = v },
	"--volperm-url":     func(im *certify.Implementation, v string) { im.URL = v },
	"--volperm-contact": func(im *certify.Implementation, v string) { im.Contact = append(im.Contact, v) },
}

// extraArgs applies E2E_EXTRA_ARGS: --host=URL points client-go's in-cluster configuration at
// URL's host and port (KUBERNETES_SERVICE_HOST/PORT, as rest.InClusterConfig reads them),
// e2e.test's meaning of the flag; --volperm-probe-image=IMAGE is the probe image (the flag of
// volperm's e2e binary); --volperm-vendor, -product, -version, -url and -contact name the
// implementation and --volperm-claim=FEATURE (repeated, or comma-separated) its claims, as
// --implementation and --claim do; --volperm-flex-driver=true is the target
// cluster:flex-driver; --volperm-nodes=SELECTOR the nodes the cases run on (hydrophone splits
// --extra-args at commas: a selector of one requirement, e.g. a label of the nodes certified).
// --host and --volperm-probe-image may also be written as two words.
// hydrophone joins its --extra-args with spaces, each starting with --: a word that does not
// start with -- continues the value before it ("--volperm-product=kind v1.37.1"). Anything else
// is refused, as e2e.test refuses a flag it does not know.
func extraArgs(v string) (runnerExtra, error) {
	var out runnerExtra
	var args []string
	for _, w := range strings.Fields(v) {
		if n := len(args); n > 0 && !strings.HasPrefix(w, "--") && strings.Contains(args[n-1], "=") {
			args[n-1] += " " + w
			continue
		}
		args = append(args, w)
	}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if !hasValue && i+1 < len(args) && (name == "--host" || name == "--volperm-probe-image") {
			value, hasValue = args[i+1], true
			i++
		}
		set, names := implementationArgs[name]
		switch {
		case name == "--host" && hasValue:
			u, err := url.Parse(value)
			if err != nil || u.Scheme != "https" || u.Hostname() == "" {
				return out, fmt.Errorf("--host=%q: want https://HOST:PORT", value)
			}
			port := u.Port()
			if port == "" {
				port = "443"
			}
			os.Setenv("KUBERNETES_SERVICE_HOST", u.Hostname())
			os.Setenv("KUBERNETES_SERVICE_PORT", port)
		case name == "--volperm-probe-image" && hasValue && value != "":
			out.probeImage = value
		case names && hasValue && value != "":
			if out.implementation == nil {
				out.implementation = &certify.Implementation{}
			}
			set(out.implementation, value)
		case name == "--volperm-claim" && hasValue && value != "":
			out.claims = append(out.claims, value)
		case name == "--volperm-flex-driver" && hasValue && (value == "true" || value == "false"):
			out.flexDriver = value == "true"
		case name == "--volperm-nodes" && hasValue && value != "":
			out.nodes = value
		default:
			return out, fmt.Errorf("unknown argument %q: the runner takes --host=URL (the apiserver), --volperm-probe-image=IMAGE, --volperm-flex-driver=true, --volperm-nodes=SELECTOR, --volperm-vendor, --volperm-product, --volperm-version, --volperm-url, --volperm-contact and --volperm-claim only", args[i])
		}
	}
	if im := out.implementation; im != nil && (im.Vendor == "" || im.Product == "" || im.Version == "") {
		return out, errors.New("--volperm-vendor, --volperm-product and --volperm-version name the implementation together: give all three")
	}
	return out, nil
}

// ownImage is the image of the runner's own container, found through the apiserver: its pod is
// named as its hostname in its service account's namespace; the container whose image is a
// volperm image, or the pod's only container.
func ownImage() (string, error) {
	name, err := os.Hostname()
	if err != nil {
		return "", err
	}
	ns, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return "", fmt.Errorf("not in a pod: %w", err)
	}
	_, client, err := cluster.Client("", "")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod, err := client.CoreV1().Pods(strings.TrimSpace(string(ns))).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("the runner's pod: %w", err)
	}
	var found []string
	for _, c := range pod.Spec.Containers {
		if isVolpermImage(c.Image) {
			found = append(found, c.Image)
		}
	}
	if len(found) == 0 && len(pod.Spec.Containers) == 1 {
		found = append(found, pod.Spec.Containers[0].Image)
	}
	if len(found) != 1 {
		return "", fmt.Errorf("pod %s/%s: cannot tell the runner's container among %d", pod.Namespace, pod.Name, len(pod.Spec.Containers))
	}
	return found[0], nil
}
