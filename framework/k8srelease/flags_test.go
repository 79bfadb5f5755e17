package k8srelease

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// The modules that compile v1.37's Kubernetes code: the upstream agent (and make test's vet of
// it), the e2e module (its test binary), the kind node image's commands.
var kubernetesModules = []string{AgentDir, "e2e", "build/kindnode"}

// TestKubernetesModulesAgree: every module two of them build with is at one version in both
// (after their replace directives), so that, compiled with BuildFlags, each package of v1.37 is
// compiled once per machine (issue 34). A module raised in one (volperm's own requirements raise
// the agent's and the e2e module's) is raised in the others with `go get MODULE@VERSION`.
func TestKubernetesModulesAgree(t *testing.T) {
	seen := map[string]map[string][]string{} // module -> version -> the go.mod files
	for _, m := range kubernetesModules {
		path := filepath.Join("..", "..", m, "go.mod")
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse(path, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		versions := map[string]string{}
		for _, r := range f.Require {
			versions[r.Mod.Path] = r.Mod.Version
		}
		for _, r := range f.Replace {
			if r.New.Version == "" { // a directory: volperm's own packages, not shared builds
				delete(versions, r.Old.Path)
				continue
			}
			if _, ok := versions[r.Old.Path]; ok && (r.Old.Version == "" || r.Old.Version == versions[r.Old.Path]) {
				// A module held at another of its own versions is not the same build as that
				// version required: under -trimpath the compiler is told the required version's
				// path (k8s.io/utils@REQUIRED/...), so every package above it compiles anew.
				versions[r.Old.Path] = r.New.Path + "@" + r.New.Version
			}
		}
		for mod, v := range versions {
			if seen[mod] == nil {
				seen[mod] = map[string][]string{}
			}
			seen[mod][v] = append(seen[mod][v], m)
		}
	}
	shared := 0
	for mod, vs := range seen {
		n := 0
		for _, files := range vs {
			n += len(files)
		}
		if n > 1 {
			shared++
		}
		if len(vs) > 1 {
			var parts []string
			for v, files := range vs {
				parts = append(parts, v+" in "+strings.Join(files, ", "))
			}
			sort.Strings(parts)
			t.Errorf("%s: %s; raise the lower ones (go get %s@VERSION in that module, then go mod tidy)", mod, strings.Join(parts, "; "), mod)
		}
	}
	if shared < 100 {
		t.Errorf("only %d modules are shared by %v: the parse is wrong", shared, kubernetesModules)
	}
}

// TestBuildsAreK8srelease: the Makefile and .ci/run export BuildEnv and BuildFlags (as
// CGO_ENABLED and GOFLAGS), so that every go command they run, and every one their tests start,
// builds as k8srelease builds Kubernetes code; and nothing in either sets CGO_ENABLED otherwise.
func TestBuildsAreK8srelease(t *testing.T) {
	for file, forms := range map[string][2]string{
		"Makefile": {`(?m)^export %s := (.*)$`, `(?m)^export GOFLAGS := (.*)$`},
		".ci/run":  {`(?m)^export %s=(.*)$`, `(?m)^export GOFLAGS="(.*)"$`},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, kv := range BuildEnv {
			k, v, _ := strings.Cut(kv, "=")
			m := regexp.MustCompile(fmt.Sprintf(forms[0], k)).FindAllStringSubmatch(text, -1)
			if len(m) != 1 || m[0][1] != v {
				t.Errorf("%s exports %s as %q; want one export of %q (k8srelease.BuildEnv)", file, k, m, v)
			}
			if n := strings.Count(text, k+"="); n > 1 {
				t.Errorf("%s sets %s %d times; want only the export", file, k, n)
			}
		}
		m := regexp.MustCompile(forms[1]).FindStringSubmatch(text)
		if m == nil || !strings.HasPrefix(m[1], strings.Join(BuildFlags, " ")+" ") {
			t.Errorf("%s exports GOFLAGS as %q; want k8srelease.BuildFlags %q first", file, m, BuildFlags)
		}
	}
}

// TestOneCompilePerPackage: a package of Kubernetes code that volperm, the upstream agent, the e2e
// module and the node image's module all build has one build action ID in all four, built with
// BuildEnv and BuildFlags: Go's cache compiles it once for all of them (issue 34). Same versions
// are not enough (TestKubernetesModulesAgree): a module held back by a replace is compiled under
// -trimpath as the version required, and every package above it anew.
func TestOneCompilePerPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("go list -export compiles what the cache lacks")
	}
	pkgs := []string{"k8s.io/utils/ptr", "k8s.io/apimachinery/pkg/runtime", "k8s.io/api/core/v1", "k8s.io/client-go/kubernetes"}
	ids := map[string]map[string][]string{} // package -> action ID -> modules
	for _, m := range append([]string{"."}, kubernetesModules...) {
		cmd := exec.Command("go", append(append([]string{"list", "-export"}, BuildFlags...), append([]string{"-f", "{{.ImportPath}} {{.BuildID}}"}, pkgs...)...)...)
		cmd.Dir = filepath.Join("..", "..", m)
		cmd.Env = append(os.Environ(), BuildEnv...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: go list: %v", m, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, id, _ := strings.Cut(line, " ")
			action, _, _ := strings.Cut(id, "/")
			if ids[pkg] == nil {
				ids[pkg] = map[string][]string{}
			}
			ids[pkg][action] = append(ids[pkg][action], m)
		}
	}
	for _, p := range pkgs {
		if len(ids[p]) != 1 {
			t.Errorf("%s is compiled %d ways: %v", p, len(ids[p]), ids[p])
		}
	}
}
