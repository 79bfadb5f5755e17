package fixturedriver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/flexvolume"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/caseroot/caseroottest"
)

func call(t *testing.T, args ...string) (int, result) {
	t.Helper()
	var out bytes.Buffer
	code := Main(args, &out)
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: output %q is not a driver status: %v", args, out.String(), err)
	}
	return code, r
}

func TestInit(t *testing.T) {
	code, r := call(t, "init")
	if code != 0 || r.Status != "Success" || r.Capabilities["attach"] {
		t.Errorf("init: %d %+v, want Success without attach", code, r)
	}
}

func TestUnsupportedAndBadCalls(t *testing.T) {
	for _, args := range [][]string{{}, {"attach", "x"}, {"mount", "/x"}, {"mount", "/x", "not json"}, {"unmount"}} {
		code, r := call(t, args...)
		if code == 0 || r.Status == "Success" {
			t.Errorf("%q: %d %+v, want a failure", args, code, r)
		}
	}
}

// TestMountCreatesStorageOnce: the first mount creates the storage exactly as given; a second
// mount (a kubelet restart) leaves what a container changed; unmount removes dir and marker.
func TestMountCreatesStorageOnce(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // needs root: the driver chowns
	base := caseroottest.TempDir(t)
	StateDir = filepath.Join(base, "state")
	dir := filepath.Join(base, "volumes", Dir, "data")
	storage, _ := json.Marshal([]framework.File{
		{Path: "conf", Dir: true, Mode: 0o700, UID: 1000, GID: 1000},
		{Path: "conf/key", Mode: 0o410, UID: 1000, GID: 3000},
	})
	opts, _ := json.Marshal(map[string]string{"kubernetes.io/fsType": "", StorageOption: string(storage)})
	if code, r := call(t, "mount", dir, string(opts)); code != 0 || r.Status != "Success" {
		t.Fatalf("mount: %d %+v", code, r)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, "conf/key"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o7777 != 0o410 || st.Uid != 1000 || st.Gid != 3000 {
		t.Errorf("conf/key: mode %o uid %d gid %d, want 410 1000 3000", st.Mode&0o7777, st.Uid, st.Gid)
	}
	if err := os.Chmod(filepath.Join(dir, "conf/key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := call(t, "mount", dir, string(opts)); code != 0 {
		t.Fatal("second mount failed")
	}
	if fi, err := os.Lstat(filepath.Join(dir, "conf/key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("second mount re-created the storage: %v %v", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("the plugin's volumes dir holds %d entries, want only the volume (no marker beside it)", len(entries))
	}
	if code, _ := call(t, "unmount", dir); code != 0 {
		t.Fatal("unmount failed")
	}
	for _, p := range []string{dir, marker(dir)} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after unmount: %v", p, err)
		}
	}
}

// TestOneDriverName: the reference node (nodeimpl, which imports nothing of framework) serves
// the driver name every target installs.
func TestOneDriverName(t *testing.T) {
	if flexvolume.FixtureDriver != framework.FixtureDriver {
		t.Errorf("nodeimpl/flexvolume serves %q, the harness installs %q", flexvolume.FixtureDriver, framework.FixtureDriver)
	}
}
