package k8srelease

import (
	"os"
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

// TestMakefileBuildsKubernetesAsK8srelease: the Makefile's K8S_BUILD_ENV and K8S_BUILD_FLAGS are
// BuildEnv and BuildFlags, and every go command the Makefile runs in a module of Kubernetes code
// uses both.
func TestMakefileBuildsKubernetesAsK8srelease(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for name, want := range map[string]string{"K8S_BUILD_ENV": strings.Join(BuildEnv, " "), "K8S_BUILD_FLAGS": strings.Join(BuildFlags, " ")} {
		m := regexp.MustCompile(`(?m)^` + name + ` :?= (.*)$`).FindStringSubmatch(text)
		if m == nil || strings.TrimSpace(m[1]) != want {
			t.Errorf("the Makefile's %s is %q; want %q (k8srelease)", name, m, want)
		}
	}
	cmds := 0
	for _, line := range strings.Split(text, "\n") {
		if !strings.Contains(line, "cd "+AgentDir) && !strings.Contains(line, "cd e2e") {
			continue
		}
		for _, cmd := range strings.Split(line, "&&")[1:] {
			if !strings.Contains(cmd, "$(GO)") {
				continue
			}
			cmds++
			if !strings.Contains(cmd, "$(K8S_BUILD_ENV) $(GO)") || !strings.Contains(cmd, "$(K8S_BUILD_FLAGS)") {
				t.Errorf("the Makefile runs %q without $(K8S_BUILD_ENV) and $(K8S_BUILD_FLAGS)", strings.TrimSpace(cmd))
			}
		}
	}
	if cmds < 4 {
		t.Errorf("found %d go commands in the Kubernetes modules in the Makefile; want the vets, the e2e test and the e2e binary", cmds)
	}
}
