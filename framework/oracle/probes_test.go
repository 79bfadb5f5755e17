package oracle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/volperm/volperm/framework"
)

func TestProbes(t *testing.T) {
	u1001 := framework.User{UID: 1001, GID: 1001}
	u1002 := framework.User{UID: 1002, GID: 1002}
	u1003 := framework.User{UID: 1003, GID: 1003}
	member := framework.User{UID: 1004, GID: 1004, Groups: []int64{2000}}
	root := framework.User{}
	on := both(framework.GateEmptyDirVolumeMode, true)
	tests := []struct {
		name   string
		c      framework.Case
		probes []framework.Probe
		want   []framework.ProbeResult
	}{
		{
			name: "sticky 01777: only the owner deletes or renames",
			c:    framework.Case{Gates: on, Pod: podWith(emptyDir("tmp", "", i32(01777)))},
			probes: []framework.Probe{
				{Name: "1001 creates", Volume: "tmp", As: u1001, Op: framework.OpCreate, Path: "f"},
				{Name: "1002 writes? no: 0644", Volume: "tmp", As: u1002, Op: framework.OpWrite, Path: "f"},
				{Name: "1002 reads", Volume: "tmp", As: u1002, Op: framework.OpRead, Path: "f"},
				{Name: "1002 deletes", Volume: "tmp", As: u1002, Op: framework.OpDelete, Path: "f"},
				{Name: "1002 renames", Volume: "tmp", As: u1002, Op: framework.OpRename, Path: "f", To: "g"},
				{Name: "1001 renames", Volume: "tmp", As: u1001, Op: framework.OpRename, Path: "f", To: "g"},
				{Name: "1001 deletes", Volume: "tmp", As: u1001, Op: framework.OpDelete, Path: "g"},
				{Name: "gone", Volume: "tmp", As: u1001, Op: framework.OpDelete, Path: "g"},
			},
			want: []framework.ProbeResult{
				{Name: "1001 creates", Allowed: true}, {Name: "1002 writes? no: 0644", Errno: "EACCES"},
				{Name: "1002 reads", Allowed: true}, {Name: "1002 deletes", Errno: "EPERM"},
				{Name: "1002 renames", Errno: "EPERM"}, {Name: "1001 renames", Allowed: true},
				{Name: "1001 deletes", Allowed: true}, {Name: "gone", Errno: "ENOENT"},
			},
		},
		{
			name: "0777 without sticky: anyone deletes",
			c:    framework.Case{Pod: podWith(emptyDir("tmp", "", nil))},
			probes: []framework.Probe{
				{Name: "1001 creates", Volume: "tmp", As: u1001, Op: framework.OpCreate, Path: "f"},
				{Name: "1001 creates again", Volume: "tmp", As: u1001, Op: framework.OpCreate, Path: "f"},
				{Name: "1002 deletes", Volume: "tmp", As: u1002, Op: framework.OpDelete, Path: "f"},
			},
			want: []framework.ProbeResult{{Name: "1001 creates", Allowed: true}, {Name: "1001 creates again", Errno: "EEXIST"}, {Name: "1002 deletes", Allowed: true}},
		},
		{
			name: "0750: others are denied",
			c:    framework.Case{Gates: on, Pod: podWith(emptyDir("v", "", i32(0750)))},
			probes: []framework.Probe{
				{Name: "1003 lists", Volume: "v", As: u1003, Op: framework.OpList, Path: "."},
				{Name: "1003 creates", Volume: "v", As: u1003, Op: framework.OpCreate, Path: "f"},
				{Name: "root creates", Volume: "v", As: root, Op: framework.OpMkdir, Path: "d"},
				{Name: "1003 reads below", Volume: "v", As: u1003, Op: framework.OpList, Path: "d"},
			},
			want: []framework.ProbeResult{
				{Name: "1003 lists", Errno: "EACCES"}, {Name: "1003 creates", Errno: "EACCES"},
				{Name: "root creates", Allowed: true}, {Name: "1003 reads below", Errno: "EACCES"},
			},
		},
		{
			name: "fsGroup member writes; new entries take the group; setgid passes to new dirs",
			c:    framework.Case{Gates: on, Pod: withFSGroup(podWith(emptyDir("v", "", i32(0750))), 2000)},
			probes: []framework.Probe{
				{Name: "member mkdir", Volume: "v", As: member, Op: framework.OpMkdir, Path: "d"},
				{Name: "member creates inside", Volume: "v", As: member, Op: framework.OpCreate, Path: "d/f"},
				{Name: "other lists", Volume: "v", As: u1003, Op: framework.OpList, Path: "."},
				{Name: "another member reads", Volume: "v", As: framework.User{UID: 1005, GID: 2000}, Op: framework.OpRead, Path: "d/f"},
				{Name: "another member writes", Volume: "v", As: framework.User{UID: 1005, GID: 2000}, Op: framework.OpWrite, Path: "d/f"},
				{Name: "list a file", Volume: "v", As: member, Op: framework.OpList, Path: "d/f"},
				{Name: "path through a file", Volume: "v", As: member, Op: framework.OpRead, Path: "d/f/x"},
				{Name: "write a dir", Volume: "v", As: member, Op: framework.OpWrite, Path: "d"},
				{Name: "delete a dir", Volume: "v", As: member, Op: framework.OpDelete, Path: "d"},
			},
			want: []framework.ProbeResult{
				{Name: "member mkdir", Allowed: true}, {Name: "member creates inside", Allowed: true},
				{Name: "other lists", Errno: "EACCES"}, {Name: "another member reads", Allowed: true},
				{Name: "another member writes", Errno: "EACCES"}, {Name: "list a file", Errno: "ENOTDIR"},
				{Name: "path through a file", Errno: "ENOTDIR"}, {Name: "write a dir", Errno: "EISDIR"},
				{Name: "delete a dir", Errno: "EISDIR"},
			},
		},
		{
			name: "secret 0400 + fsGroup: a member reads through the symlinks, writes nothing",
			c: framework.Case{Pod: withFSGroup(podWith(secretVol("s", "creds", i32(0400))), 2000),
				Sources: map[string]map[string]string{"secret/creds": {"key": "v"}}},
			probes: []framework.Probe{
				{Name: "member reads", Volume: "s", As: member, Op: framework.OpRead, Path: "key"},
				{Name: "member writes", Volume: "s", As: member, Op: framework.OpWrite, Path: "key"},
				{Name: "other reads", Volume: "s", As: u1003, Op: framework.OpRead, Path: "key"},
			},
			want: []framework.ProbeResult{{Name: "member reads", Allowed: true}, {Name: "member writes", Errno: "EACCES"}, {Name: "other reads", Errno: "EACCES"}},
		},
		{
			name: "hostPath: probes act on the host object",
			c: framework.Case{Host: []framework.HostObject{{Path: "/srv/data", Kind: framework.KindDirectory}},
				Pod: podWith(hostPath("h", "/srv/data", corev1.HostPathDirectory))},
			probes: []framework.Probe{
				{Name: "user creates", Volume: "h", As: u1001, Op: framework.OpCreate, Path: "f"},
				{Name: "root creates", Volume: "h", As: root, Op: framework.OpCreate, Path: "f"},
				{Name: "user reads", Volume: "h", As: u1001, Op: framework.OpRead, Path: "f"},
			},
			want: []framework.ProbeResult{{Name: "user creates", Errno: "EACCES"}, {Name: "root creates", Allowed: true}, {Name: "user reads", Allowed: true}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Name, c.Probes = tc.name, tc.probes
			got := Expect(&c)
			want := framework.Observation{Case: c.Name, Admission: got.Admission, Volumes: got.Volumes, Probes: tc.want}
			if d := framework.Diff(&want, got); len(d) > 0 {
				t.Errorf("%v", d)
			}
			if !got.Admission.Allowed {
				t.Errorf("not admitted: %v", got.Admission.Errors)
			}
		})
	}
}
