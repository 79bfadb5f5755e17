package userns

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount's idmapped bind mount shifts every id by the mapping, an id outside it unmapped, with
// the namespace made either way: a child stopped at its exec (stoppedNamespace) or a child that
// runs and holds it.
func TestMountShiftsIDs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("idmapped mounts need root")
	}
	for _, stopped := range []bool{true, false} {
		t.Run(map[bool]string{true: "stopped at exec", false: "holding child"}[stopped], func(t *testing.T) {
			defer func(v bool) { stopAtExec = v }(stopAtExec)
			stopAtExec = stopped
			src, dst := t.TempDir(), filepath.Join(t.TempDir(), "dst")
			for name, id := range map[string]int{"root": 0, "app": 1000, "outside": 70000} {
				p := filepath.Join(src, name)
				if err := os.WriteFile(p, nil, 0644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(p, id, id); err != nil {
					t.Fatal(err)
				}
			}
			m := Mapping{HostID: 2 * 65536, Length: 65536}
			if err := Mount(src, dst, m); err != nil {
				t.Skipf("no idmapped mounts here: %v", err)
			}
			defer syscall.Unmount(dst, syscall.MNT_DETACH)
			for name, want := range map[string]uint32{"root": 2 * 65536, "app": 2*65536 + 1000, "outside": 65534} {
				fi, err := os.Stat(filepath.Join(dst, name))
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				if st.Uid != want || st.Gid != want {
					t.Errorf("%s: %d:%d, want %d:%d", name, st.Uid, st.Gid, want, want)
				}
			}
		})
	}
}
