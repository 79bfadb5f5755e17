package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
)

// caseFile is a Case document and a plain Pod, the two kinds a case file may hold.
const caseFile = `apiVersion: volperm.dev/v1
kind: Case
name: emptyDir mode 0750 on the default medium, both gates on
area: emptydir
profile: alpha
labels: [kep-5502]
gates:
  apiserver: {EmptyDirVolumeMode: true}
  kubelet: {EmptyDirVolumeMode: true}
pod:
  spec:
    volumes:
    - name: data
      emptyDir:
        mode: 0750
---
apiVersion: v1
kind: Pod
metadata:
  name: plain-emptydir
spec:
  volumes:
  - name: scratch
    emptyDir: {}
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, streams{out: &out, err: &errb})
	return code, out.String(), errb.String()
}

// TestBadInput: every kind of bad input exits 2 with one line on stderr that names the flag or
// the file and field, and writes nothing on stdout.
func TestBadInput(t *testing.T) {
	good := writeFile(t, "good.yaml", caseFile)
	unknownField := writeFile(t, "field.yaml", strings.Replace(caseFile, "profile: alpha", "profile: alpha\nmedium: Memory", 1))
	badArea := writeFile(t, "area.yaml", strings.Replace(caseFile, "area: emptydir", "area: emptyDirs", 1))
	badLabel := writeFile(t, "label.yaml", strings.Replace(caseFile, "labels: [kep-5502]", "labels: [a/b]", 1))
	badYAML := writeFile(t, "syntax.yaml", "apiVersion: volperm.dev/v1\nkind: Case\nname: [unclosed\n")
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	impl := writeFile(t, "implementation.yaml", "vendor: Example Corp\nproduct: Example Kubelet\nversion: 1.37.1-example.3\n")
	// An agent whose hello lists no feature (docs/exec-protocol.md "Features"), driven a process
	// per call: it serves nothing.
	featureless := writeFile(t, "agent", "#!/bin/sh\n[ \"$1\" = hello ] && echo '{\"protocolVersion\":\"volperm.dev/exec/v1\",\"op\":\"hello\",\"features\":[]}' && exit 0\nexit 2\n")
	if err := os.Chmod(featureless, 0o755); err != nil {
		t.Fatal(err)
	}
	certifying := func(args ...string) []string { return append([]string{"run", "--implementation", impl}, args...) }
	tests := []struct {
		name string
		args []string
		want []string // substrings of the one stderr line
	}{
		{"no command", nil, []string{"Usage: volperm COMMAND"}},
		{"unknown command", []string{"frobnicate"}, []string{`unknown command "frobnicate"`, "diff, expect, observe, releases, run, runner, version"}},
		{"unknown flag", []string{"run", "--bogus"}, []string{"volperm run:", "-bogus", "volperm run -h"}},
		{"stray argument", []string{"run", "cases.yaml"}, []string{`unexpected argument "cases.yaml"`, "-f"}},
		{"unknown target", []string{"run", "--target", "nope", "-f", good}, []string{"--target:", `unknown target "nope"`, "reference"}},
		{"unknown profile", []string{"run", "--profile", "alpha,beta"}, []string{"--profile:", `unknown profile "beta"`, "conformance, alpha, proposal"}},
		{"bad label filter", []string{"run", "--label-filter", "emptydir &&", "-f", good}, []string{`--label-filter "emptydir &&"`}},
		{"bad focus", []string{"run", "--focus", "mode(", "-f", good}, []string{`--focus "mode("`, "regular expression"}},
		// Before the target is built: kind would build its node image first.
		{"selection of nothing", []string{"run", "--target", "kind", "--focus", "no such case"}, []string{`--focus "no such case" select none of the`, "widen them"}},
		// Issue 51: a certification that would leave cases out is refused before it starts.
		{"certification with a label filter", certifying("--label-filter", "emptydir"),
			[]string{"a certification (--implementation) runs the whole catalogue", `--label-filter "emptydir"`, "drop it", "--claim"}},
		{"certification with a focus and a skip", certifying("--focus", "mode", "--skip", "HugePages"), []string{`--focus "mode" and --skip "HugePages"`, "drop it"}},
		{"certification of case files", certifying("-f", good), []string{"-f " + good, "drop it"}},
		{"a claim the agent's hello lacks", certifying("--target", "exec:"+featureless, "--work-dir", caseroottest.TempDir(t), "--claim", "volumeBindMountOptions,userNamespaces"),
			[]string{"--claim userNamespaces, but the agent does not implement that part of the protocol", `lists no feature "userNamespaces"`, "drop the claim"}},
		// Issue 54: a rerun of a directory with no run, or beside a filter.
		{"rerun of no run", []string{"run", "--rerun-failed", missing}, []string{"--rerun-failed:", missing, "neither junit.xml", "give a directory a run wrote"}},
		{"rerun beside a label filter", []string{"run", "--rerun-failed", missing, "--label-filter", "emptydir"}, []string{"--rerun-failed runs again what failed in", "--label-filter would choose otherwise", "drop one"}},
		{"report diff of one directory", []string{"report", "diff", missing}, []string{"volperm report diff [--all] OLD NEW", "got 1 argument"}},
		{"diff needs two targets", []string{"diff", "--targets", "reference"}, []string{`--targets "reference"`, "exactly two targets"}},
		{"diff unknown target", []string{"diff", "--targets", "reference,nope", "-f", good}, []string{"--targets:", `unknown target "nope"`}},
		{"unknown gate", []string{"expect", "-f", good, "--kubelet-gates", "EmptyDirVolumeModes=true"},
			[]string{"--kubelet-gates:", `"EmptyDirVolumeModes"`, "AtomicWriteVolumeUserFields, EmptyDirVolumeMode, PreservePermissions"}},
		{"bad gate value", []string{"observe", "-f", good, "--apiserver-gates", "EmptyDirVolumeMode=yes please"},
			[]string{"--apiserver-gates:", "EmptyDirVolumeMode", "not true or false"}},
		{"no file", []string{"expect"}, []string{"no case file", "-f FILE"}},
		{"missing file", []string{"expect", "-f", missing}, []string{missing}},
		{"unknown field", []string{"expect", "-f", unknownField}, []string{unknownField, `"medium"`}},
		{"bad area", []string{"run", "-f", badArea}, []string{badArea, "area:", `"emptyDirs"`}},
		{"bad label", []string{"run", "-f", badLabel}, []string{badLabel, `label "a/b"`}},
		{"bad YAML", []string{"observe", "-f", badYAML}, []string{badYAML, "YAML"}},
		{"image without subcommand", []string{"image"}, []string{"volperm image save -o FILE"}},
		{"image save without -o", []string{"image", "save"}, []string{"-o FILE is required"}},
		{"unknown cluster option", []string{"run", "--target", "cluster:fast", "-f", good}, []string{`unknown option "fast"`, "cluster:flex-driver"}},
		{"unknown kind option", []string{"run", "--target", "kind:fast", "-f", good}, []string{`unknown option "fast"`, "kind:per-cell"}},
		{"catalogue without subcommand", []string{"catalogue"}, []string{"volperm catalogue rules"}},
		{"catalogue unknown rule", []string{"catalogue", "rules", "--rule", "walk.masks"}, []string{`--rule "walk.masks"`, "walk.mask"}},
		{"catalogue bad case regexp", []string{"catalogue", "rules", "--case", "mode("}, []string{"--case:"}},
		{"catalogue case matches nothing", []string{"catalogue", "rules", "--case", "no such case"}, []string{`"no such case" matches no case`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runMain(tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitUsage, stderr)
			}
			if tt.args != nil && (strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n")) {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"run", "-h"}, {"expect", "--help"}} {
		code, stdout, stderr := runMain(args...)
		if code != exitOK || stderr != "" || !strings.Contains(stdout, "volperm") {
			t.Errorf("%q: exit %d stdout %q stderr %q, want usage on stdout and 0", args, code, stdout, stderr)
		}
	}
}

func TestExpect(t *testing.T) {
	file := writeFile(t, "cases.yaml", caseFile)
	single := writeFile(t, "one.yaml", strings.SplitN(caseFile, "---\n", 2)[1])
	tests := []struct {
		name  string
		args  []string
		cases []string
	}{
		{"several cases: a list", []string{"expect", "-f", file}, []string{"emptyDir mode 0750 on the default medium, both gates on", "plain-emptydir"}},
		{"one case: an object", []string{"expect", "-f", single, "--apiserver-gates", "EmptyDirVolumeMode=true", "--kubelet-gates", "EmptyDirVolumeMode=true"}, []string{"plain-emptydir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runMain(tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var obs []framework.Observation
			if len(tt.cases) == 1 {
				obs = make([]framework.Observation, 1)
				err := json.Unmarshal([]byte(stdout), &obs[0])
				if err != nil {
					t.Fatalf("not one Observation: %v\n%s", err, stdout)
				}
			} else if err := json.Unmarshal([]byte(stdout), &obs); err != nil {
				t.Fatalf("not a list of Observations: %v\n%s", err, stdout)
			}
			if len(obs) != len(tt.cases) {
				t.Fatalf("%d Observations, want %d", len(obs), len(tt.cases))
			}
			for i, o := range obs {
				if o.Case != tt.cases[i] || o.APIVersion != framework.ObservationVersion || o.Source != "oracle" {
					t.Errorf("Observation %d: case %q apiVersion %q source %q, want %q %s oracle", i, o.Case, o.APIVersion, o.Source, tt.cases[i], framework.ObservationVersion)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runMain("version")
	for _, w := range []string{"volperm ", "\ngo go1.", "\nkernel ", "\nk8s.io/api ", "\ntarget reference: "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("version output lacks %q:\n%s", w, stdout)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// fenced returns the first fenced block of the given language in a Markdown file.
func fenced(t *testing.T, path, lang string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```"+lang+"\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("%s has no ```%s block", path, lang)
	}
	return block
}

// TestDocExamples keeps the examples of docs/commands.md and docs/observation.md true: the case files
// load, and the Observation printed in the docs is what `volperm expect` prints.
func TestDocExamples(t *testing.T) {
	commands := writeFile(t, "commands.yaml", fenced(t, "../../docs/commands.md", "yaml"))
	if code, _, stderr := runMain("expect", "-f", commands); code != exitOK {
		t.Errorf("the case of docs/commands.md \"Case files\": exit %d: %s", code, stderr)
	}
	doc := "../../docs/observation.md"
	file := writeFile(t, "observation.yaml", fenced(t, doc, "yaml"))
	code, stdout, stderr := runMain("expect", "-f", file)
	if code != exitOK {
		t.Fatalf("the case of %s: exit %d: %s", doc, code, stderr)
	}
	if want := fenced(t, doc, "json"); stdout != want {
		t.Errorf("%s shows\n%s\nbut volperm expect prints\n%s", doc, want, stdout)
	}
}

// TestDiff: a target compared with itself agrees on every case; reference and upstream differ
// exactly where upstream's known differences are (emptyDir mode on Memory).
func TestDiff(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // node-side cases need root
	memory := writeFile(t, "memory.yaml", strings.Replace(caseFile, "        mode: 0750", "        mode: 0750\n        medium: Memory", 1))
	code, out, errs := runMain("diff", "--targets", "reference,reference", "--work-dir", caseroottest.TempDir(t), "-f", memory)
	if code != exitOK || !strings.Contains(out, "2 cases compared on reference and reference: 0 differ, 2 agree") {
		t.Fatalf("reference vs itself: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runMain("diff", "--targets", "reference,upstream", "--work-dir", caseroottest.TempDir(t), "-f", memory)
	want := `volume "data" path ".": reference dir 0750 0:0, upstream dir 1777 0:0`
	if code != exitFailed || !strings.Contains(out, want) || !strings.Contains(out, "1 differ, 1 agree") {
		t.Fatalf("reference vs upstream: exit %d, want 1 and %q\n%s%s", code, want, out, errs)
	}
}

// TestExpectAgreesWithObserveOnCanonicalCases: for every file under manifests/cases, what
// `volperm expect` prints (the oracle) and what `volperm observe --target reference` prints are
// the same Observations (issue: "agree on every canonical case under manifests/").
func TestExpectAgreesWithObserveOnCanonicalCases(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // observe on the reference target needs root for node-side cases
	files, err := filepath.Glob("../../manifests/cases/*.yaml")
	if err != nil || len(files) < 6 {
		t.Fatalf("canonical case files: %v, %v", files, err)
	}
	total := 0
	for _, f := range files {
		code, expected, errs := runMain("expect", "-f", f)
		if code != exitOK {
			t.Fatalf("expect -f %s: exit %d: %s", f, code, errs)
		}
		code, observed, errs := runMain("observe", "--target", "reference", "--work-dir", caseroottest.TempDir(t), "-f", f)
		if code != exitOK {
			t.Fatalf("observe -f %s: exit %d: %s", f, code, errs)
		}
		var exp, obs []*framework.Observation
		if err := json.Unmarshal([]byte(expected), &exp); err != nil {
			t.Fatalf("expect -f %s: %v", f, err)
		}
		if err := json.Unmarshal([]byte(observed), &obs); err != nil {
			t.Fatalf("observe -f %s: %v", f, err)
		}
		if len(exp) != len(obs) || len(exp) == 0 {
			t.Fatalf("%s: %d expected, %d observed", f, len(exp), len(obs))
		}
		for i := range exp {
			if exp[i].Case != obs[i].Case {
				t.Fatalf("%s: case %d is %q in expect, %q in observe", f, i, exp[i].Case, obs[i].Case)
			}
			if d := framework.Diff(exp[i], obs[i]); len(d) > 0 {
				t.Errorf("%s: %q: expect and observe differ:\n  %s", f, exp[i].Case, strings.Join(d, "\n  "))
			}
			total++
		}
	}
	t.Logf("%d canonical cases in %d files agree", total, len(files))
}

// TestCatalogueRules: `volperm catalogue rules` prints every rule of docs/spec.md with its cases
// and exits 0 when none has a gap (TestCatalogueCoversEveryRule checks the gaps themselves);
// --case prints the rules a case checks; -f explains the cases of a file, whose gaps exit 1.
func TestCatalogueRules(t *testing.T) {
	code, stdout, stderr := runMain("catalogue", "rules")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"[walk.mask]", "[emptydir.mode]", "access       read-write", "covered under every condition"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	code, stdout, _ = runMain("catalogue", "rules", "--case", "^emptyDir mode 0750 on the default medium, both gates on$")
	if code != exitOK || !strings.Contains(stdout, "[emptydir.mode] medium=default fsgroup=unset boundary=inside") {
		t.Errorf("--case: exit %d, output %q", code, stdout)
	}
	file := writeFile(t, "cases.yaml", caseFile)
	code, stdout, stderr = runMain("catalogue", "rules", "-f", file)
	if code != exitFailed || !strings.Contains(stderr, "gaps") || !strings.Contains(stdout, "GAP") {
		t.Errorf("-f with two cases: exit %d, stderr %q; want 1 and the gaps", code, stderr)
	}
}
