package mountinfo

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"
)

// TestKernelAgreesWithTable: the kernel's answer (kernel.go) and the table's name the same mounts
// at and below every directory of a layout with what a node's volumes have: stacks, mounts
// inside mounts, a mount hidden under a later one, a file bound on a file, a name with a space, a
// sibling whose name starts like the directory's, and a bind from outside.
func TestKernelAgreesWithTable(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mounting needs root
	if !kernelAnswers() {
		t.Skip("this kernel has no statmount/listmount (Linux 6.8): AtOrBelow reads the table, which the other tests check")
	}
	base := t.TempDir()
	dir := filepath.Join(base, "pod")
	p := func(rel string) string { return filepath.Join(dir, rel) }
	mount := func(src, dst, fstype string, flags uintptr, data string) {
		t.Helper()
		if err := syscall.Mount(src, dst, fstype, flags, data); err != nil {
			t.Fatalf("mount %s on %s: %v", src, dst, err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(dst, syscall.MNT_DETACH) })
	}
	mkdir := func(d string) {
		t.Helper()
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"volumes/a b", "volumes/stack", "plain/deep/er", "hidden", "runtime/c1", "runtime/c2"} {
		mkdir(p(d))
	}
	mkdir(dir + "2/x") // "pod2": not below "pod"
	mount("tmpfs", dir+"2/x", "tmpfs", 0, "size=1m")
	mount("tmpfs", p("volumes/a b"), "tmpfs", 0, "size=1m")
	mkdir(p("volumes/a b/inner"))
	mount("tmpfs", p("volumes/a b/inner"), "tmpfs", 0, "size=1m")
	mount("tmpfs", p("volumes/stack"), "tmpfs", 0, "size=1m")
	mount("tmpfs", p("volumes/stack"), "tmpfs", 0, "") // no options: statmount answers none
	mkdir(p("volumes/huge"))
	if err := syscall.Mount("nodev", p("volumes/huge"), "hugetlbfs", 0, "pagesize=2M"); err == nil {
		t.Cleanup(func() { _ = syscall.Unmount(p("volumes/huge"), syscall.MNT_DETACH) })
	}
	mount("tmpfs", p("plain/deep/er"), "tmpfs", 0, "size=1m")
	// A mount hidden under a later one on its parent: only listmount of the parent finds it.
	mkdir(p("hidden/sub"))
	mount("tmpfs", p("hidden"), "tmpfs", 0, "size=1m")
	mkdir(p("hidden/sub"))
	mount("tmpfs", p("hidden/sub"), "tmpfs", 0, "size=1m")
	mount("tmpfs", p("hidden"), "tmpfs", 0, "size=1m")
	// The runtime's binds: a volume with a mount inside it, recursively; a file on a file.
	mount(p("volumes/a b"), p("runtime/c1"), "", syscall.MS_BIND|syscall.MS_REC, "")
	file := p("runtime/f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("plain/src"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mount(p("plain/src"), file, "", syscall.MS_BIND, "")
	// A bind from outside dir into it.
	mount(dir+"2/x", p("runtime/c2"), "", syscall.MS_BIND, "")

	for _, d := range []string{base, dir, dir + "2", p("volumes"), p("volumes/a b"), p("volumes/stack"), p("hidden"), p("runtime"), file, p("plain"), p("missing")} {
		k, err := atOrBelowKernel(d)
		if err != nil {
			t.Fatalf("atOrBelowKernel(%s): %v", d, err)
		}
		tb, err := atOrBelowTable(d)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(k)
		slices.Sort(tb)
		if !slices.Equal(k, tb) {
			t.Errorf("below %s:\n kernel %q\n table  %q", d, k, tb)
		}
	}
	// At: the top mount's type and options as the table shows them.
	for _, d := range []string{p("volumes/stack"), p("volumes/a b"), p("volumes/huge"), file, p("plain")} {
		k, ok := atKernel(d)
		if !ok {
			t.Fatalf("atKernel(%s): the kernel did not answer", d)
		}
		mounts, err := Read()
		if err != nil {
			t.Fatal(err)
		}
		var tb *Mount
		for i := range mounts {
			if mounts[i].Point == d {
				tb = &mounts[i]
			}
		}
		if (k == nil) != (tb == nil) || k != nil && *k != *tb {
			t.Errorf("At(%s): kernel %+v, table %+v", d, k, tb)
		}
	}
}
