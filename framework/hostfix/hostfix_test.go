package hostfix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/snapshot"
)

func TestCreateEveryKind(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mknod of devices needs root
	root := t.TempDir()
	objs := []framework.HostObject{
		{Path: "/a/dir", Kind: framework.KindDirectory},
		{Path: "/a/file", Kind: framework.KindFile, Mode: 0600},
		{Path: "/a/sock", Kind: framework.KindSocket},
		{Path: "/a/chr", Kind: framework.KindCharDev},
		{Path: "/a/blk", Kind: framework.KindBlockDev},
		{Path: "/b/link-to-sock", Kind: framework.KindSymlink, Target: "/a/sock"},
		{Path: "/c/nothing", Kind: framework.KindNothing},
	}
	if err := Create(root, objs); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"/a/dir": {"dir", "0755"}, "/a/file": {"file", "0600"}, "/a/sock": {"socket", "0755"},
		"/a/chr": {"chardev", "0644"}, "/a/blk": {"blockdev", "0644"}, "/b/link-to-sock": {"socket", "0755"},
	}
	for p, w := range want {
		got, err := snapshot.Root(Path(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Type != w[0] || got[0].Mode != w[1] {
			t.Errorf("%s: got %s %s, want %s %s", p, got[0].Type, got[0].Mode, w[0], w[1])
		}
	}
	if _, err := os.Lstat(Path(root, "/c/nothing")); !os.IsNotExist(err) {
		t.Errorf("nothing must not exist: %v", err)
	}
	if st, err := os.Stat(filepath.Join(root, "c")); err != nil || !st.IsDir() {
		t.Errorf("the parent of a nothing object must exist: %v", err)
	}
	if l, _ := os.Readlink(Path(root, "/b/link-to-sock")); l != Path(root, "/a/sock") {
		t.Errorf("symlink must point into the host root, got %q", l)
	}
}

// Fixtures that try to reach outside the host root (.., absolute symlink targets climbing out,
// a fixture path through a fixture symlink) stay inside it: a canary beside the host root is
// untouched, and nothing is created outside.
func TestFixturesStayInsideHostRoot(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // mknod of devices needs root
	parent := t.TempDir()
	hostRoot := filepath.Join(parent, "host")
	if err := os.Mkdir(hostRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	canary := filepath.Join(parent, "canary")
	if err := os.WriteFile(canary, []byte("canary"), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := []framework.HostObject{
		{Path: "../../canary", Kind: framework.KindFile, Mode: 0o777},
		{Path: "/../../../escaped-dir", Kind: framework.KindDirectory},
		{Path: "/up", Kind: framework.KindSymlink, Target: "/../.."},
		{Path: "/etc/../../../etc-escape", Kind: framework.KindSocket},
	}
	err := Create(hostRoot, objs)
	t.Logf("Create: %v", err)
	if b, err := os.ReadFile(canary); err != nil || string(b) != "canary" {
		t.Errorf("canary changed: %q %v", b, err)
	}
	if st, err := os.Stat(canary); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("canary mode changed: %v %v", st, err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 2 {
		t.Errorf("something was created beside the host root: %v", entries)
	}
	// The symlink points into the host root, whatever its target climbs.
	if got, err := os.Readlink(filepath.Join(hostRoot, "up")); err != nil || !strings.HasPrefix(got, hostRoot) {
		t.Errorf("symlink up -> %q (%v), want a target inside %s", got, err, hostRoot)
	}
}
