package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/volperm/volperm/framework"
)

func TestTreeNormalizesAtomicWriterTimestamps(t *testing.T) {
	root := t.TempDir()
	ts := filepath.Join(root, "..2026_11_21_04_50_12.123456789")
	must(t, os.Mkdir(ts, 0755))
	must(t, os.Chmod(ts, 0755))
	must(t, os.WriteFile(filepath.Join(ts, "key"), []byte("v"), 0400))
	must(t, os.Chmod(filepath.Join(ts, "key"), 0400))
	must(t, os.Symlink("..2026_11_21_04_50_12.123456789", filepath.Join(root, "..data")))
	must(t, os.Symlink("..data/key", filepath.Join(root, "key")))
	must(t, os.Chmod(root, 0777|os.ModeSticky))

	got, err := Tree(root)
	must(t, err)
	uid, gid := int64(os.Getuid()), int64(os.Getgid())
	want := map[string]framework.PathObservation{
		".":               {Path: ".", Type: "dir", Mode: "1777", UID: uid, GID: gid},
		"..TIMESTAMP":     {Path: "..TIMESTAMP", Type: "dir", Mode: "0755", UID: uid, GID: gid},
		"..TIMESTAMP/key": {Path: "..TIMESTAMP/key", Type: "file", Mode: "0400", UID: uid, GID: gid},
		"..data":          {Path: "..data", Type: "symlink", Mode: "0777", UID: uid, GID: gid, Link: "..TIMESTAMP"},
		"key":             {Path: "key", Type: "symlink", Mode: "0777", UID: uid, GID: gid, Link: "..data/key"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for _, p := range got {
		if want[p.Path] != p {
			t.Errorf("%s: got %+v, want %+v", p.Path, p, want[p.Path])
		}
	}
}

func TestRootFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0640))
	must(t, os.Chmod(filepath.Join(dir, "f"), 0640))
	must(t, os.Symlink(filepath.Join(dir, "f"), filepath.Join(dir, "l")))
	got, err := Root(filepath.Join(dir, "l"))
	must(t, err)
	if len(got) != 1 || got[0].Type != "file" || got[0].Mode != "0640" || got[0].Path != "." {
		t.Fatalf("got %+v, want one file entry 0640", got)
	}
	absent, err := Root(filepath.Join(dir, "missing"))
	must(t, err)
	if len(absent) != 1 || absent[0] != (framework.PathObservation{Path: ".", Type: Absent, Mode: "0000"}) {
		t.Fatalf("a missing root: got %+v, want one absent entry", absent)
	}
	// A path below a file (ENOTDIR): nothing is there either.
	below, err := Root(filepath.Join(dir, "f", "below"))
	must(t, err)
	if len(below) != 1 || below[0] != (framework.PathObservation{Path: ".", Type: Absent, Mode: "0000"}) {
		t.Fatalf("a root below a file: got %+v, want one absent entry", below)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
