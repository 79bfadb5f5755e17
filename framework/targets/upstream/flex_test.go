package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/snapshot"
	"github.com/volperm/volperm/hostfeature"
)

// The fixture driver's mount populates the storage exactly (owners, modes with setuid, setgid
// and sticky, symlinks not chmod'ed, parents it is not given made 0755) in a few processes: the
// chowns and chmods are batched, so a storage of hundreds of files is not two processes a file.
func TestFixtureDriverPopulatesInBatches(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root) // chown to other uids
	files := []framework.File{
		{Path: ".", Dir: true, Mode: 02770, GID: 2000},
		{Path: "setuid", Mode: 04755, UID: 1000},
		{Path: "tmp", Dir: true, Mode: 01777},
		{Path: "shared", Dir: true, Mode: 02700, GID: 3000},
		{Path: "shared/link", Symlink: "../setuid", UID: 1001, GID: 1001},
		{Path: "implied/deep/file", Mode: 0400, UID: 1002},
	}
	want := map[string]string{
		".": "dir 2770 0:2000", "setuid": "file 4755 1000:0", "tmp": "dir 1777 0:0", "shared": "dir 2700 0:3000",
		"shared/link": "symlink 0777 1001:1001", "implied": "dir 0755 0:0", "implied/deep": "dir 0755 0:0",
		"implied/deep/file": "file 0400 1002:0",
	}
	for i := range 450 {
		p := fmt.Sprintf("many/f%03d", i)
		files = append(files, framework.File{Path: p, Mode: 0600 + uint32(i%2)*040, UID: int64(i % 3)})
		want[p] = fmt.Sprintf("file %04o %d:0", 0600+(i%2)*040, i%3)
	}
	want["many"] = "dir 0755 0:0"

	cmds, err := populateCommands(files)
	if err != nil {
		t.Fatal(err)
	}
	var execs int
	for _, c := range cmds {
		if strings.HasPrefix(c, "chown ") || strings.HasPrefix(c, "chmod ") || strings.HasPrefix(c, "ln ") || strings.HasPrefix(c, "mkdir ") {
			execs++
		}
	}
	if execs > 30 {
		t.Errorf("%d commands that start a process for %d entries: want them batched", execs, len(files))
	}

	plugins := t.TempDir()
	if err := installFixtureDriver(plugins, map[string][]framework.File{"data": files}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0750); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(plugins, "volperm~fixture", "fixture"), "mount", dir, "{}").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"Success"`) {
		t.Fatalf("mount: %v: %s", err, out)
	}
	got, err := snapshot.Tree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d entries, want %d", len(got), len(want))
	}
	for _, p := range got {
		if w := want[p.Path]; w != fmt.Sprintf("%s %s %d:%d", p.Type, p.Mode, p.UID, p.GID) {
			t.Errorf("%s: %s %s %d:%d, want %s", p.Path, p.Type, p.Mode, p.UID, p.GID, w)
		}
	}
}
