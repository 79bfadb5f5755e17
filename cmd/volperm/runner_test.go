package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/hostfeature"
)

// The file contracts of the two runners that run a conformance image (docs/certify.md
// "Sonobuoy and hydrophone"): hydrophone reads e2e.log for "Will run N of M specs" and the
// closing "Ginkgo ran 1 suite", copies e2e.log and junit_01.xml from /tmp/results and takes the
// exit code; Sonobuoy's worker waits for $SONOBUOY_RESULTS_DIR/done naming a tarball whose *.xml
// files are JUnit.
func TestRunnerContracts(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root, hostfeature.ProtectedSymlinks)
	type junit struct {
		Cases []struct {
			Name string `xml:"name,attr"`
		} `xml:"testsuite>testcase"`
	}
	for _, tc := range []struct {
		name  string
		env   []string
		specs *regexp.Regexp // every spec run matches it
		none  *regexp.Regexp // no spec run matches it
	}{
		{"hydrophone: RESULTS_DIR, E2E_FOCUS and E2E_SKIP", []string{"E2E_FOCUS=mode 0750", "E2E_SKIP=HugePages", "E2E_PARALLEL=y"},
			regexp.MustCompile(`mode 0750`), regexp.MustCompile(`HugePages`)},
		{"sonobuoy: SONOBUOY_RESULTS_DIR and the conformance image's default focus", []string{`E2E_FOCUS=\[Conformance\]`, "E2E_SKIP=emptydir|fsgroup|atomicwriter"},
			regexp.MustCompile(`^\[(hostpath|flexvolume|skew)\]`), regexp.MustCompile(`alpha|proposal`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "results")
			env := append(os.Environ(), tc.env...)
			if strings.HasPrefix(tc.name, "sonobuoy") {
				env = append(env, "RESULTS_DIR=", "SONOBUOY_RESULTS_DIR="+dir)
			} else {
				env = append(env, "RESULTS_DIR="+dir)
			}
			// A process of its own: a test binary runs one Ginkgo suite.
			cmd := exec.Command(binary(t), "runner", "--target", "reference", "--work-dir", caseroottest.TempDir(t))
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("runner: %v\n%s", err, out)
			}
			log, err := os.ReadFile(filepath.Join(dir, runnerLog))
			if err != nil {
				t.Fatal(err)
			}
			if string(log) != string(out) {
				t.Errorf("e2e.log is not what the runner printed:\n%s\n---\n%s", log, out)
			}
			will := regexp.MustCompile(`(?m)^Will run (\d+) of \d+ specs$`).FindStringSubmatch(string(log))
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			if will == nil || !slices.ContainsFunc(lines[max(0, len(lines)-30):], func(l string) bool { return regexp.MustCompile(`Ginkgo ran (00|[1-9]\d{0,2}) suite`).MatchString(l) }) {
				t.Fatalf("e2e.log lacks hydrophone's markers:\n%s", log)
			}
			raw, err := os.ReadFile(filepath.Join(dir, runnerJUnit))
			if err != nil {
				t.Fatal(err)
			}
			var j junit
			if err := xml.Unmarshal(raw, &j); err != nil {
				t.Fatal(err)
			}
			var specs []string
			for _, c := range j.Cases {
				if strings.HasPrefix(c.Name, "[") { // not Ginkgo's suite-level nodes
					specs = append(specs, c.Name)
				}
			}
			if len(specs) == 0 || will[1] != strconv.Itoa(len(specs)) {
				t.Errorf("junit_01.xml has %d specs, the log says it will run %s", len(specs), will[1])
			}
			for _, s := range specs {
				if !tc.specs.MatchString(s) || tc.none.MatchString(s) {
					t.Errorf("spec %q ran: the environment selects %v and not %v", s, tc.specs, tc.none)
				}
			}
			done, err := os.ReadFile(filepath.Join(dir, runnerDone))
			if err != nil {
				t.Fatal(err)
			}
			if string(done) != filepath.Join(dir, runnerTarball) {
				t.Fatalf("done holds %q, want the tarball's path", done)
			}
			names := tarNames(t, string(done))
			for _, want := range []string{runnerLog, runnerJUnit, "summary.md", "summary.json"} {
				if !slices.Contains(names, want) {
					t.Errorf("the tarball lacks %s: %v", want, names)
				}
			}
		})
	}
}

func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// Bad input still leaves e2e.log (with the one-line reason), the tarball and done, and exits 2.
func TestRunnerBadInput(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary(t), "runner", "--target", "reference")
	cmd.Env = append(os.Environ(), "RESULTS_DIR="+dir, "E2E_FOCUS=(", "E2E_SKIP=", "E2E_PARALLEL=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("exit %v, want %d:\n%s", err, exitUsage, out)
	}
	log, err := os.ReadFile(filepath.Join(dir, runnerLog))
	if err != nil || !strings.Contains(string(log), `--focus "("`) {
		t.Errorf("e2e.log lacks the reason: %q, %v", log, err)
	}
	if done, err := os.ReadFile(filepath.Join(dir, runnerDone)); err != nil || !slices.Contains(tarNames(t, string(done)), runnerLog) {
		t.Errorf("done: %q, %v", done, err)
	}
	t.Setenv("RESULTS_DIR", t.TempDir())
	t.Setenv("E2E_PARALLEL", "some")
	if code, _, errs := runMain("runner", "--target", "reference"); code != exitUsage || !strings.Contains(errs, "E2E_PARALLEL") {
		t.Errorf("E2E_PARALLEL=some: exit %d, %q", code, errs)
	}
}

func TestParallelPods(t *testing.T) {
	for v, want := range map[string]int{"y": 0, "true": 0, "n": 1, "false": 1, "4": 4} {
		if got, err := parallelPods(v); err != nil || got != want {
			t.Errorf("parallelPods(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
	for _, v := range []string{"0", "-2", "many"} {
		if _, err := parallelPods(v); err == nil {
			t.Errorf("parallelPods(%q) accepted", v)
		}
	}
}
