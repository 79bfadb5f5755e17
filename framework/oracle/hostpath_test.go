package oracle

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

// hostObjects is every kind of host object, symlinks included (their targets absolute pod paths).
var hostObjects = []framework.HostObject{
	{Path: "/h/none", Kind: framework.KindNothing},
	{Path: "/h/dir", Kind: framework.KindDirectory},
	{Path: "/h/file", Kind: framework.KindFile},
	{Path: "/h/sock", Kind: framework.KindSocket},
	{Path: "/h/chr", Kind: framework.KindCharDev},
	{Path: "/h/blk", Kind: framework.KindBlockDev},
	{Path: "/h/ldir", Kind: framework.KindSymlink, Target: "/h/dir"},
	{Path: "/h/lfile", Kind: framework.KindSymlink, Target: "/h/file"},
	{Path: "/h/lnone", Kind: framework.KindSymlink, Target: "/h/gone"},
}

// TestHostPathTypeMatrix checks every type against every object with host_path.go's texts.
func TestHostPathTypeMatrix(t *testing.T) {
	notA := func(p, word, kind string) string {
		return fmt.Sprintf("hostPath type check failed: %s is not a %s, it's a %s", p, word, kind)
	}
	missing := func(p, word string) string {
		return fmt.Sprintf("hostPath type check failed, %s is not a %s, unable to determine its type: path %q does not exist", p, word, p)
	}
	// What the container sees at each path once set-up succeeded (stat, symlinks followed).
	seen := map[string]framework.PathObservation{
		"/h/dir": entry(".", "dir", "0755", 0, 0), "/h/file": entry(".", "file", "0644", 0, 0),
		"/h/sock": entry(".", "socket", "0755", 0, 0), "/h/chr": entry(".", "chardev", "0644", 0, 0),
		"/h/blk": entry(".", "blockdev", "0644", 0, 0), "/h/ldir": entry(".", "dir", "0755", 0, 0),
		"/h/lfile": entry(".", "file", "0644", 0, 0),
	}
	kinds := map[string]string{"/h/dir": "Directory", "/h/file": "File", "/h/sock": "Socket", "/h/chr": "CharDevice", "/h/blk": "BlockDevice", "/h/ldir": "Directory", "/h/lfile": "File"}
	type want struct {
		setUp string
		root  *framework.PathObservation
	}
	okSeen := func(p string) want { e := seen[p]; return want{"ok", &e} }
	absent := entry(".", "absent", "0000", 0, 0) // docs/spec.md "Snapshot": nothing there after an ok set-up
	created := func(typ, mode string) want { e := entry(".", typ, mode, 0, 0); return want{"ok", &e} }
	all := []string{"/h/none", "/h/dir", "/h/file", "/h/sock", "/h/chr", "/h/blk", "/h/ldir", "/h/lfile", "/h/lnone"}

	table := map[corev1.HostPathType]map[string]want{}
	// "": no check at all.
	table[corev1.HostPathUnset] = map[string]want{"/h/none": {"ok", &absent}, "/h/lnone": {"ok", &absent}}
	for _, p := range all[1:8] {
		table[corev1.HostPathUnset][p] = okSeen(p)
	}
	for typ, w := range map[corev1.HostPathType][2]string{
		corev1.HostPathDirectory: {"directory", "Directory"}, corev1.HostPathFile: {"file", "File"},
		corev1.HostPathSocket: {"socket file", "Socket"}, corev1.HostPathCharDev: {"character device", "CharDevice"},
		corev1.HostPathBlockDev: {"block device", "BlockDevice"},
	} {
		table[typ] = map[string]want{"/h/none": {setUp: missing("/h/none", w[0])}, "/h/lnone": {setUp: missing("/h/lnone", w[0])}}
		for _, p := range all[1:8] {
			if kinds[p] == w[1] {
				table[typ][p] = okSeen(p)
			} else {
				table[typ][p] = want{setUp: notA(p, w[0], kinds[p])}
			}
		}
	}
	// *OrCreate: missing -> created (a dangling symlink: MkdirAll's EEXIST is ignored, the file
	// is created at the link's target); existing -> checked as Directory / File.
	table[corev1.HostPathDirectoryOrCreate] = map[string]want{"/h/none": created("dir", "0755"), "/h/lnone": {"ok", &absent}}
	table[corev1.HostPathFileOrCreate] = map[string]want{"/h/none": created("file", "0644"), "/h/lnone": created("file", "0644")}
	for _, p := range all[1:8] {
		table[corev1.HostPathDirectoryOrCreate][p] = table[corev1.HostPathDirectory][p]
		table[corev1.HostPathFileOrCreate][p] = table[corev1.HostPathFile][p]
	}

	for typ, row := range table {
		for _, p := range all {
			w := row[p]
			name := fmt.Sprintf("type %q at %s", typ, p)
			t.Run(name, func(t *testing.T) {
				vo := framework.VolumeObservation{Name: "h", Type: "hostPath", SetUp: w.setUp}
				if w.root != nil {
					vo.Paths = []framework.PathObservation{*w.root}
				}
				expectObservation(t, &framework.Case{Name: name, Host: hostObjects, Pod: podWith(hostPath("h", p, typ))},
					framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{vo}})
			})
		}
	}
}

func TestHostPathTexts(t *testing.T) {
	tests := []struct {
		name string
		host []framework.HostObject
		path string
		typ  corev1.HostPathType
		want framework.VolumeObservation
	}{
		{
			name: "socket missing", path: "/p", typ: corev1.HostPathSocket,
			want: framework.VolumeObservation{SetUp: `hostPath type check failed, /p is not a socket file, unable to determine its type: path "/p" does not exist`},
		},
		{
			name: "directory is a file", host: []framework.HostObject{{Path: "/p", Kind: framework.KindFile}}, path: "/p", typ: corev1.HostPathDirectory,
			want: framework.VolumeObservation{SetUp: "hostPath type check failed: /p is not a directory, it's a File"},
		},
		{
			name: "FileOrCreate without a parent", path: "/nowhere/x", typ: corev1.HostPathFileOrCreate,
			want: framework.VolumeObservation{SetUp: "open /nowhere/x: no such file or directory"},
		},
		{
			name: "DirectoryOrCreate below a file", host: []framework.HostObject{{Path: "/h/file", Kind: framework.KindFile}}, path: "/h/file/sub", typ: corev1.HostPathDirectoryOrCreate,
			want: framework.VolumeObservation{SetUp: "mkdir /h/file: not a directory"},
		},
		{
			name: "Directory below a file", host: []framework.HostObject{{Path: "/h/file", Kind: framework.KindFile}}, path: "/h/file/sub", typ: corev1.HostPathDirectory,
			want: framework.VolumeObservation{SetUp: "hostPath type check failed, /h/file/sub is not a directory, unable to determine its type: stat /h/file/sub: not a directory"},
		},
		{
			name: "DirectoryOrCreate makes parents", path: "/a/b/c", typ: corev1.HostPathDirectoryOrCreate,
			want: framework.VolumeObservation{SetUp: "ok", Paths: []framework.PathObservation{entry(".", "dir", "0755", 0, 0)}},
		},
		{
			name: "fixture mode applied exactly", host: []framework.HostObject{{Path: "/d", Kind: framework.KindDirectory, Mode: 01777}}, path: "/d", typ: corev1.HostPathDirectory,
			want: framework.VolumeObservation{SetUp: "ok", Paths: []framework.PathObservation{entry(".", "dir", "1777", 0, 0)}},
		},
		{
			name: "symlink chain to a socket", path: "/run/docker.sock", typ: corev1.HostPathSocket,
			host: []framework.HostObject{
				{Path: "/run/docker.sock", Kind: framework.KindSymlink, Target: "/run/alias.sock"},
				{Path: "/run/alias.sock", Kind: framework.KindSymlink, Target: "/var/run/real.sock"},
				{Path: "/var/run/real.sock", Kind: framework.KindSocket, Mode: 0660},
			},
			want: framework.VolumeObservation{SetUp: "ok", Paths: []framework.PathObservation{entry(".", "socket", "0660", 0, 0)}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.Name, tc.want.Type = "h", "hostPath"
			// hostPath never gets ownership changes, fsGroup or not (seed 003).
			c := &framework.Case{Name: tc.name, Host: tc.host, Pod: withFSGroup(podWith(hostPath("h", tc.path, tc.typ)), 2000)}
			expectObservation(t, c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{tc.want}})
		})
	}
}

// TestHostPathRestartChecksAgain: a second SetUp checks again; DirectoryOrCreate finds its dir.
func TestHostPathRestartChecksAgain(t *testing.T) {
	c := &framework.Case{
		Name:  "restart re-checks",
		Pod:   podWith(hostPath("h", "/made", corev1.HostPathDirectoryOrCreate), hostPath("s", "/nosock", corev1.HostPathSocket)),
		After: []framework.Step{{RestartKubelet: true}},
	}
	expectObservation(t, c, framework.Observation{Admission: allowed, Volumes: []framework.VolumeObservation{
		{Name: "h", Type: "hostPath", SetUp: "ok", Paths: []framework.PathObservation{entry(".", "dir", "0755", 0, 0)}},
		{Name: "s", Type: "hostPath", SetUp: `hostPath type check failed, /nosock is not a socket file, unable to determine its type: path "/nosock" does not exist`},
	}})
}
