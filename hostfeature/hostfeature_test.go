package hostfeature

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestRequired(t *testing.T) {
	gi := HugePages(resource.MustParse("1Gi"))
	for _, tc := range []struct {
		name, ci, require string
		feature           Feature
		want              bool
	}{
		{"nothing set", "", "", Root, false},
		{"CI requires what its script installs: root", "true", "", Root, true},
		{"CI requires what its script installs: an engine", "true", "", ContainerEngine, true},
		// A 2 MiB-only host must stay green under CI=true (issue: CI red on such a host).
		{"CI does not require a huge page size", "true", "", gi, false},
		{"CI does not require the hugetlb cgroup", "true", "", HugetlbCgroup, false},
		{"named", "", "hugepages-1Gi", gi, true},
		{"named among others", "", "cases, hugepages-1Gi", gi, true},
		{"another size named", "", "hugepages-2Mi", gi, false},
		{"every size", "", "hugepages", gi, true},
		{"all", "", "all", SysResource, true},
		{"old name of the engine", "", "kind,container", ContainerEngine, true},
		{"cases alone requires no feature", "", "cases", Root, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvCI, tc.ci)
			t.Setenv(EnvRequire, tc.require)
			if got := Required(tc.feature); got != tc.want {
				t.Errorf("Required(%s) = %v, want %v", tc.feature, got, tc.want)
			}
		})
	}
}

func TestRequireCases(t *testing.T) {
	for _, tc := range []struct {
		ci, require string
		want        bool
	}{
		{"", "", false}, {"true", "", true}, {"", "cases", true}, {"", "all", true},
		{"", "hugepages-1Gi", false}, {"false", "container", false},
	} {
		t.Setenv(EnvCI, tc.ci)
		t.Setenv(EnvRequire, tc.require)
		if got := RequireCases(); got != tc.want {
			t.Errorf("CI=%q %s=%q: RequireCases() = %v, want %v", tc.ci, EnvRequire, tc.require, got, tc.want)
		}
	}
}

func TestCheckRequireList(t *testing.T) {
	for _, ok := range []string{"", "cases", "all", "hugepages-1Gi,root", " container-engine , cgroup-v2", "container", "hugepages"} {
		t.Setenv(EnvRequire, ok)
		if err := CheckRequireList(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"hugepages-big": `"hugepages-big" is not a huge page size`,
		"roo":           `unknown entry "roo"`,
		"cases,kind":    `unknown entry "kind"`,
	} {
		t.Setenv(EnvRequire, bad)
		err := CheckRequireList()
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", bad, err, want)
		}
	}
}

// fakeSysfs points sysHugePages at a dir holding the given hugepages-<kB>kB entries.
func fakeSysfs(t *testing.T, kbs ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, kb := range kbs {
		if err := os.Mkdir(filepath.Join(dir, "hugepages-"+kb+"kB"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := sysHugePages
	sysHugePages = dir
	t.Cleanup(func() { sysHugePages = old })
}

func TestHugePageSizes(t *testing.T) {
	fakeSysfs(t, "1048576", "2048")
	var got []string
	for _, s := range HugePageSizes() {
		got = append(got, s.String())
	}
	if strings.Join(got, ",") != "2Mi,1Gi" {
		t.Errorf("HugePageSizes() = %v, want [2Mi 1Gi]", got)
	}
}

func TestMissingHugePageSizeNamesFeatureAndRemedy(t *testing.T) {
	if !kernelHas("hugetlbfs") {
		t.Skip("the size check runs after the hugetlbfs check: this kernel has no hugetlbfs")
	}
	fakeSysfs(t, "2048")
	if m := Check(HugePages(resource.MustParse("2Mi"))); m != nil {
		t.Errorf("2Mi offered, yet missing: %v", m)
	}
	m := Check(HugePages(resource.MustParse("1Gi")))
	if m == nil {
		t.Fatal("1Gi not offered, yet not missing")
	}
	msg := m.Error()
	for _, want := range []string{"hugepages-1Gi", "lists 2Mi", "hugepagesz=1G"} {
		if !strings.Contains(msg, want) {
			t.Errorf("reason %q does not say %q", msg, want)
		}
	}
	fakeSysfs(t)
	if m := Check(HugePages(resource.MustParse("2Mi"))); m == nil || !strings.Contains(m.Error(), "lists none") {
		t.Errorf("no sizes offered: %v", m)
	}
}

func TestMissingEngineNamesSocket(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	if err := ping(); err == nil || !strings.Contains(err.Error(), "/nonexistent/docker.sock") {
		t.Errorf("ping() = %v, want an error naming the socket", err)
	}
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
	if err := ping(); err == nil || !strings.Contains(err.Error(), "not a unix socket") {
		t.Errorf("ping() = %v, want a refusal of a tcp engine", err)
	}
}

// Need skips with the reason, or fails when the feature is required.
func TestNeed(t *testing.T) {
	fakeSysfs(t)
	f := HugePages(resource.MustParse("1Gi"))
	t.Setenv(EnvCI, "")
	t.Setenv(EnvRequire, "")
	ft := &fakeTB{}
	runNeed(ft, f)
	if !ft.skipped || ft.failed || !strings.Contains(ft.msg, "hugepages-1Gi") {
		t.Errorf("not required: skipped %v failed %v msg %q, want a skip naming the feature", ft.skipped, ft.failed, ft.msg)
	}
	t.Setenv(EnvRequire, "hugepages-1Gi")
	ft = &fakeTB{}
	runNeed(ft, f)
	if ft.skipped || !ft.failed || !strings.Contains(ft.msg, "required here") {
		t.Errorf("required: skipped %v failed %v msg %q, want a failure", ft.skipped, ft.failed, ft.msg)
	}
}

// fakeTB records what Need did; Skip and Fatal end the goroutine as testing.T's do.
type fakeTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.skipped, f.msg = true, strings.TrimSpace(strings.Join(toStrings(args), " "))
	panic(stop{})
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = strings.TrimSpace(sprintf(format, args...))
	panic(stop{})
}

type stop struct{}

func runNeed(ft *fakeTB, f Feature) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	Need(ft, f)
}

func toStrings(args []any) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = fmt.Sprint(a)
	}
	return out
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
