package mountinfo

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"
)

// BenchmarkTearDownLookups: what one pod's teardown asks (AtOrBelow of its directory, At of a
// Memory volume) on a host with 0, 500 and 2,000 mounts besides (issue 52: every real node has
// hundreds to thousands), the kernel's way against reading the whole table. CPU time per
// lookup, so a loaded machine changes it less than a whole run's wall time:
//
//	go test ./nodeimpl/mountinfo -run '^$' -bench TearDownLookups -benchtime 300x
func BenchmarkTearDownLookups(b *testing.B) {
	hostfeature.Need(b, hostfeature.Root) // mounting needs root
	pod := b.TempDir()
	vol := filepath.Join(pod, "volumes", "kubernetes.io~empty-dir", "mem")
	if err := os.MkdirAll(vol, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", vol, "tmpfs", 0, "size=1m"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = syscall.Unmount(vol, syscall.MNT_DETACH) })
	foreign := b.TempDir()
	made := 0
	b.Cleanup(func() {
		for i := range made {
			_ = syscall.Unmount(filepath.Join(foreign, fmt.Sprint(i)), syscall.MNT_DETACH)
		}
	})
	for _, n := range []int{0, 500, 2000} {
		for ; made < n; made++ {
			p := filepath.Join(foreign, fmt.Sprint(made))
			if err := os.Mkdir(p, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Mount("volperm-foreign", p, "tmpfs", 0, "size=4k"); err != nil {
				b.Fatal(err)
			}
		}
		for _, way := range []string{"kernel", "table"} {
			b.Run(fmt.Sprintf("%s/%d-foreign", way, n), func(b *testing.B) {
				if way == "table" {
					b.Setenv(EnvMountinfo, "table")
				} else if !kernelAnswers() {
					b.Skip("this kernel has no statmount/listmount (Linux 6.8)")
				}
				for b.Loop() {
					if m, err := AtOrBelow(pod); err != nil || len(m) != 1 {
						b.Fatalf("AtOrBelow = %q, %v", m, err)
					}
					if m, err := At(vol); err != nil || m == nil {
						b.Fatalf("At = %v, %v", m, err)
					}
				}
			})
		}
	}
}
