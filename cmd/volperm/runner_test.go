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
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
	"github.com/volperm/volperm/framework/catalogue"
	"github.com/volperm/volperm/framework/certify"
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
		{"hydrophone: RESULTS_DIR, E2E_FOCUS, E2E_SKIP and the implementation in E2E_EXTRA_ARGS", []string{"E2E_FOCUS=mode 0750", "E2E_SKIP=HugePages", "E2E_PARALLEL=y",
			"E2E_EXTRA_ARGS=--volperm-vendor=volperm --volperm-product=reference node --volperm-version=test --volperm-claim=emptyDirVolumeMode"},
			regexp.MustCompile(`mode 0750`), regexp.MustCompile(`HugePages`)},
		{"sonobuoy: SONOBUOY_RESULTS_DIR and the conformance image's default focus", []string{`E2E_FOCUS=\[Conformance\]`, "E2E_SKIP=emptydir|fsgroup|atomicwriter"},
			regexp.MustCompile(`^\[(` + strings.Join(areasBut("emptydir", "fsgroup", "atomicwriter"), "|") + `)\]`), regexp.MustCompile(`alpha|proposal`)},
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
			if strings.HasPrefix(tc.name, "hydrophone") {
				hydrophoneCopy(t, dir)
			}
		})
	}
}

// hydrophoneCopy: what hydrophone copies back of a certification run (e2e.log and junit_01.xml,
// the hand-in inside) is verified as the results dir is, problem for problem (this run's focus
// is one: a certification runs every case), with the implementation E2E_EXTRA_ARGS named.
func hydrophoneCopy(t *testing.T, results string) {
	t.Helper()
	copied := t.TempDir()
	for _, f := range []string{runnerLog, runnerJUnit} {
		raw, err := os.ReadFile(filepath.Join(results, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(copied, f), raw, 0o644)
	}
	want, err := certify.Verify(results, catalogue.Digest())
	if err != nil {
		t.Fatal(err)
	}
	got, err := certify.Verify(copied, catalogue.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || !slices.ContainsFunc(got, func(p string) bool { return strings.Contains(p, `focus "mode 0750"`) }) {
		t.Errorf("verify of hydrophone's copy: %q\nof the results dir: %q\nwant the same, the focus among them", got, want)
	}
	raw, _ := os.ReadFile(filepath.Join(results, certify.File))
	if !strings.Contains(string(raw), "product: reference node") || !strings.Contains(string(raw), "- emptyDirVolumeMode") {
		t.Errorf("%s lacks the implementation and the claim E2E_EXTRA_ARGS gave:\n%s", certify.File, raw)
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

// The in-cluster run's modes of the runner (framework/incluster): --fetch answers "not done"
// (exit incluster.ExitNotDone) until done names the tarball, then writes it; --release ends a
// --hold.
func TestRunnerFetchRelease(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envResultsDir, dir)
	if code, out, errOut := runMain("runner", "--fetch"); code != 3 || out != "" || !strings.Contains(errOut, "has not finished") {
		t.Errorf("--fetch before done: exit %d, %q, %q", code, out, errOut)
	}
	tarball := filepath.Join(dir, runnerTarball)
	if err := os.WriteFile(tarball, []byte("TARBALL"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runnerDone), []byte(tarball), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runMain("runner", "--fetch"); code != exitOK || out != "TARBALL" {
		t.Errorf("--fetch after done: exit %d, %q", code, out)
	}
	held := make(chan struct{})
	go func() {
		holdResults(streams{out: io.Discard, err: io.Discard}, time.Minute)
		close(held)
	}()
	if code, _, errOut := runMain("runner", "--release"); code != exitOK {
		t.Fatalf("--release: exit %d, %s", code, errOut)
	}
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("--release did not end the hold")
	}
}

// manifests/sonobuoy-plugin.yaml is a Sonobuoy plugin of the runner image: a Job whose junit
// results the worker collects from Sonobuoy's results dir (where `volperm runner` writes them,
// given SONOBUOY_RESULTS_DIR), the conformance focus; `volperm cluster sonobuoy-plugin --image`
// names the image in both places.
func TestSonobuoyPlugin(t *testing.T) {
	code, out, errOut := runMain("cluster", "sonobuoy-plugin", "--image", "volperm/volperm:0123456789ab")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var plugin struct {
		Config map[string]string `json:"sonobuoy-config"`
		Spec   struct {
			Name            string   `json:"name"`
			Image           string   `json:"image"`
			ImagePullPolicy string   `json:"imagePullPolicy"`
			Command         []string `json:"command"`
			Args            []string `json:"args"`
			Env             []struct{ Name, Value string }
			VolumeMounts    []struct {
				MountPath string `json:"mountPath"`
				Name      string `json:"name"`
			} `json:"volumeMounts"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict([]byte(out), &plugin); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if plugin.Config["driver"] != "Job" || plugin.Config["result-format"] != "junit" || plugin.Config["plugin-name"] != "volperm" {
		t.Errorf("sonobuoy-config %v", plugin.Config)
	}
	s := plugin.Spec
	if s.Image != "volperm/volperm:0123456789ab" || s.ImagePullPolicy != "Never" || !slices.Equal(s.Command, []string{"/volperm"}) ||
		!slices.Equal(s.Args, []string{"runner", "--probe-image", "volperm/volperm:0123456789ab"}) {
		t.Errorf("spec image %s (%s), command %q, args %q", s.Image, s.ImagePullPolicy, s.Command, s.Args)
	}
	if len(s.VolumeMounts) != 1 || s.VolumeMounts[0].MountPath != "/tmp/sonobuoy/results" {
		t.Errorf("volume mounts %+v: want Sonobuoy's results dir", s.VolumeMounts)
	}
	env := map[string]string{}
	for _, e := range s.Env {
		env[e.Name] = e.Value
	}
	if !conformanceFocus[env[envFocus]] {
		t.Errorf("E2E_FOCUS %q: want the conformance focus", env[envFocus])
	}
	if code, _, errOut := runMain("cluster", "sonobuoy-plugin", "extra"); code != exitUsage || strings.Count(errOut, "\n") != 1 {
		t.Errorf("a stray argument: exit %d, %q", code, errOut)
	}
}

// areasBut are the names of framework.Areas less those given: what an E2E_SKIP of them leaves.
func areasBut(skip ...string) []string {
	var out []string
	for _, a := range framework.Areas {
		if !slices.Contains(skip, string(a)) {
			out = append(out, string(a))
		}
	}
	return out
}

// TestRunnerExtraArgs: E2E_EXTRA_ARGS --host points the in-cluster client at the apiserver;
// anything else is refused with what the runner takes.
func TestRunnerExtraArgs(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	for _, v := range []string{"--host=https://172.18.0.2:6443", "--host https://172.18.0.2:6443"} {
		if _, err := extraArgs(v); err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		if h, p := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"); h != "172.18.0.2" || p != "6443" {
			t.Errorf("%q: host %s port %s", v, h, p)
		}
	}
	if _, err := extraArgs(""); err != nil {
		t.Errorf("empty: %v", err)
	}
	if e, err := extraArgs("--volperm-probe-image volperm/volperm:abc --host=https://h:1"); err != nil || e.probeImage != "volperm/volperm:abc" {
		t.Errorf("probe image: %+v, %v", e, err)
	}
	if e, err := extraArgs("--volperm-nodes=kubernetes.io/hostname!=w3 --host=https://h:1"); err != nil || e.nodes != "kubernetes.io/hostname!=w3" {
		t.Errorf("nodes: %+v, %v", e, err)
	}
	// hydrophone's --extra-args joined with spaces: a value with spaces is one value.
	e, err := extraArgs("--volperm-vendor=Example Corp --volperm-product=kind v1.37.1 --volperm-version=1 --volperm-claim=flexVolumeAllowlist --volperm-claim=volumeBindMountOptions --volperm-contact=a@example.com --volperm-flex-driver=true")
	if want := (certify.Implementation{Vendor: "Example Corp", Product: "kind v1.37.1", Version: "1", Contact: certify.Contacts{"a@example.com"}}); err != nil || e.implementation == nil || !reflect.DeepEqual(*e.implementation, want) ||
		!slices.Equal(e.claims, []string{"flexVolumeAllowlist", "volumeBindMountOptions"}) || !e.flexDriver {
		t.Errorf("the implementation: %+v %v, %v", e.implementation, e.claims, err)
	}
	for _, v := range []string{"--provider=skeleton", "--host=http://x:1", "--host", "--volperm-probe-image=", "--volperm-vendor=V --volperm-product=P", "--volperm-claim=", "--volperm-flex-driver=yes", "--volperm-nodes="} {
		if _, err := extraArgs(v); err == nil {
			t.Errorf("%q: accepted", v)
		}
	}
}

// TestIsVolpermImage: the runner finds its own container by the image's repository name.
func TestIsVolpermImage(t *testing.T) {
	for ref, want := range map[string]bool{
		"volperm/volperm:4ab483034bff":                true,
		"registry.example.com/qa/volperm:v0.1.0":      true,
		"localhost:5000/volperm":                      true,
		"volperm/volperm@sha256:abcd":                 true,
		"volperm/busybox:3d9f2889d678":                false,
		"registry.k8s.io/conformance:v1.37.1":         false,
		"registry.example.com/volperm/probe:abcdef12": false,
	} {
		if got := isVolpermImage(ref); got != want {
			t.Errorf("isVolpermImage(%q) = %v, want %v", ref, got, want)
		}
	}
}
