package hostpath

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
)

func requireRoot(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.Root) // needs root: the fixtures are device nodes (mknod)
}

// object is what exists at the pod's path before set-up.
type object struct {
	name string
	// kind is what a stat (following symlinks) finds: "" = nothing.
	kind corev1.HostPathType
	// symlink makes the path a symlink to an object of kind.
	symlink bool
}

var objects = func() []object {
	kinds := []corev1.HostPathType{corev1.HostPathDirectory, corev1.HostPathFile, corev1.HostPathSocket, corev1.HostPathCharDev, corev1.HostPathBlockDev}
	out := []object{{name: "nothing"}}
	for _, k := range kinds {
		out = append(out, object{name: string(k), kind: k})
	}
	for _, k := range kinds {
		out = append(out, object{name: "symlink-to-" + string(k), kind: k, symlink: true})
	}
	return out
}()

// mknod makes an object of kind at p (0755 dirs, 0644 others; devices 1:3 and 7:0).
func mknod(t *testing.T, p string, kind corev1.HostPathType) {
	t.Helper()
	var err error
	switch kind {
	case corev1.HostPathDirectory:
		err = unix.Mkdir(p, 0755)
	case corev1.HostPathFile:
		err = unix.Mknod(p, unix.S_IFREG|0644, 0)
	case corev1.HostPathSocket:
		err = unix.Mknod(p, unix.S_IFSOCK|0755, 0)
	case corev1.HostPathCharDev:
		err = unix.Mknod(p, unix.S_IFCHR|0644, int(unix.Mkdev(1, 3)))
	case corev1.HostPathBlockDev:
		err = unix.Mknod(p, unix.S_IFBLK|0644, int(unix.Mkdev(7, 0)))
	default:
		t.Fatalf("no fixture for %q", kind)
	}
	if err != nil {
		t.Fatalf("mknod %s (%s): %v", p, kind, err)
	}
}

// place makes o at the pod path /srv/p under the host root; returns the host.
func place(t *testing.T, o object) Host {
	t.Helper()
	h := Host{Root: t.TempDir()}
	if err := os.MkdirAll(h.RealPath("/srv"), 0755); err != nil {
		t.Fatal(err)
	}
	switch {
	case o.kind == "":
	case o.symlink:
		mknod(t, h.RealPath("/srv/target"), o.kind)
		if err := os.Symlink(h.RealPath("/srv/target"), h.RealPath("/srv/p")); err != nil {
			t.Fatal(err)
		}
	default:
		mknod(t, h.RealPath("/srv/p"), o.kind)
	}
	return h
}

// The spec of docs/spec.md "hostPath" (seed 001) as a table: per type, the kind it accepts, the
// word of its error text, and what it creates when nothing is there.
var types = []struct {
	typ     corev1.HostPathType
	accepts corev1.HostPathType // "" = anything, even nothing
	word    string
	creates corev1.HostPathType
}{
	{corev1.HostPathUnset, "", "", ""},
	{corev1.HostPathDirectoryOrCreate, corev1.HostPathDirectory, "directory", corev1.HostPathDirectory},
	{corev1.HostPathDirectory, corev1.HostPathDirectory, "directory", ""},
	{corev1.HostPathFileOrCreate, corev1.HostPathFile, "file", corev1.HostPathFile},
	{corev1.HostPathFile, corev1.HostPathFile, "file", ""},
	{corev1.HostPathSocket, corev1.HostPathSocket, "socket file", ""},
	{corev1.HostPathCharDev, corev1.HostPathCharDev, "character device", ""},
	{corev1.HostPathBlockDev, corev1.HostPathBlockDev, "block device", ""},
}

func TestTypeTimesObject(t *testing.T) {
	requireRoot(t)
	for _, ty := range types {
		for _, o := range objects {
			t.Run(fmt.Sprintf("type=%q/%s", ty.typ, o.name), func(t *testing.T) {
				h := place(t, o)
				typ := ty.typ
				err := h.SetUp("/srv/p", &typ)

				var want string
				switch {
				case ty.accepts == "", o.kind == ty.accepts:
				case o.kind == "" && ty.creates != "":
				case o.kind == "":
					want = fmt.Sprintf(`hostPath type check failed, /srv/p is not a %s, unable to determine its type: path "/srv/p" does not exist`, ty.word)
				default:
					want = fmt.Sprintf("hostPath type check failed: /srv/p is not a %s, it's a %s", ty.word, o.kind)
				}
				if got := errText(err); got != want {
					t.Fatalf("SetUp error:\n got %q\nwant %q", got, want)
				}

				// What is there afterwards: the object, or what *OrCreate made (0755 dir / 0644
				// file under umask 022, owned by root), or nothing for "" on nothing.
				wantKind, wantMode := o.kind, uint32(0)
				if o.kind == "" && ty.creates != "" {
					wantKind, wantMode = ty.creates, map[corev1.HostPathType]uint32{corev1.HostPathDirectory: 0755, corev1.HostPathFile: 0644}[ty.creates]
				}
				checkKind(t, h.RealPath("/srv/p"), wantKind, wantMode)
			})
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkKind checks what stat (following symlinks) finds at p; mode 0 = not checked.
func checkKind(t *testing.T, p string, kind corev1.HostPathType, mode uint32) {
	t.Helper()
	var st syscall.Stat_t
	err := syscall.Stat(p, &st)
	if kind == "" {
		if err == nil {
			t.Errorf("%s exists, want nothing", p)
		}
		return
	}
	if err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	fmtBits := map[corev1.HostPathType]uint32{
		corev1.HostPathDirectory: unix.S_IFDIR, corev1.HostPathFile: unix.S_IFREG, corev1.HostPathSocket: unix.S_IFSOCK,
		corev1.HostPathCharDev: unix.S_IFCHR, corev1.HostPathBlockDev: unix.S_IFBLK,
	}[kind]
	if st.Mode&unix.S_IFMT != fmtBits {
		t.Errorf("%s has format %o, want %s", p, st.Mode&unix.S_IFMT, kind)
	}
	if mode != 0 && (st.Mode&07777 != mode || st.Uid != 0 || st.Gid != 0) {
		t.Errorf("%s is %04o %d:%d, want %04o 0:0", p, st.Mode&07777, st.Uid, st.Gid, mode)
	}
}

// Edge cases, each with the exact upstream outcome and the pod's path in every text.
func TestEdgeCases(t *testing.T) {
	requireRoot(t)
	ptr := func(ty corev1.HostPathType) *corev1.HostPathType { return &ty }
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, h Host)
		path    string
		typ     *corev1.HostPathType
		wantErr string
		check   func(t *testing.T, h Host)
	}{
		{
			name: "nil type is unset: no check", path: "/srv/none", typ: nil,
			check: func(t *testing.T, h Host) { checkKind(t, h.RealPath("/srv/none"), "", 0) },
		},
		{
			name: "backsteps refused", path: "/srv/../etc", typ: ptr(corev1.HostPathDirectory),
			wantErr: "invalid HostPath `/srv/../etc`: must not contain '..'",
		},
		{
			name: "backsteps refused even for unset", path: "/srv/..", typ: ptr(corev1.HostPathUnset),
			wantErr: "invalid HostPath `/srv/..`: must not contain '..'",
		},
		{
			name: "DirectoryOrCreate makes the parents", path: "/srv/a/b/c", typ: ptr(corev1.HostPathDirectoryOrCreate),
			check: func(t *testing.T, h Host) {
				checkKind(t, h.RealPath("/srv/a"), corev1.HostPathDirectory, 0755)
				checkKind(t, h.RealPath("/srv/a/b/c"), corev1.HostPathDirectory, 0755)
			},
		},
		{
			name: "FileOrCreate needs the parent", path: "/srv/missing/f", typ: ptr(corev1.HostPathFileOrCreate),
			wantErr: "open /srv/missing/f: no such file or directory",
		},
		{
			name:  "DirectoryOrCreate under a file",
			setup: func(t *testing.T, h Host) { mknod(t, h.RealPath("/srv/file"), corev1.HostPathFile) },
			path:  "/srv/file/d", typ: ptr(corev1.HostPathDirectoryOrCreate),
			wantErr: "mkdir /srv/file: not a directory",
		},
		{
			name:  "Directory under a file",
			setup: func(t *testing.T, h Host) { mknod(t, h.RealPath("/srv/file"), corev1.HostPathFile) },
			path:  "/srv/file/d", typ: ptr(corev1.HostPathDirectory),
			wantErr: "hostPath type check failed, /srv/file/d is not a directory, unable to determine its type: stat /srv/file/d: not a directory",
		},
		{
			// v1.37 makeDir: MkdirAll's EEXIST on the dangling link counts as success.
			name:  "DirectoryOrCreate on a dangling symlink succeeds and makes nothing",
			setup: func(t *testing.T, h Host) { symlink(t, h.RealPath("/srv/gone"), h.RealPath("/srv/l")) },
			path:  "/srv/l", typ: ptr(corev1.HostPathDirectoryOrCreate),
			check: func(t *testing.T, h Host) { checkKind(t, h.RealPath("/srv/gone"), "", 0) },
		},
		{
			// v1.37 makeFile: O_CREAT follows the link and creates its target.
			name:  "FileOrCreate on a dangling symlink creates the target",
			setup: func(t *testing.T, h Host) { symlink(t, h.RealPath("/srv/gone"), h.RealPath("/srv/l")) },
			path:  "/srv/l", typ: ptr(corev1.HostPathFileOrCreate),
			check: func(t *testing.T, h Host) { checkKind(t, h.RealPath("/srv/gone"), corev1.HostPathFile, 0644) },
		},
		{
			name:  "Directory on a dangling symlink",
			setup: func(t *testing.T, h Host) { symlink(t, h.RealPath("/srv/gone"), h.RealPath("/srv/l")) },
			path:  "/srv/l", typ: ptr(corev1.HostPathDirectory),
			wantErr: `hostPath type check failed, /srv/l is not a directory, unable to determine its type: path "/srv/l" does not exist`,
		},
		{
			name: "unknown type", path: "/srv", typ: ptr(corev1.HostPathType("Dir")),
			wantErr: "Dir is an invalid volume type",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Host{Root: t.TempDir()}
			if err := os.MkdirAll(h.RealPath("/srv"), 0755); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, h)
			}
			if got := errText(h.SetUp(tc.path, tc.typ)); got != tc.wantErr {
				t.Fatalf("SetUp error:\n got %q\nwant %q", got, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, h)
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// DirectoryOrCreate: the umask applies (docs/spec.md "hostPath").
func TestDirectoryOrCreateUmask(t *testing.T) {
	old := syscall.Umask(077)
	defer syscall.Umask(old)
	h := Host{Root: t.TempDir()}
	ty := corev1.HostPathDirectoryOrCreate
	if err := h.SetUp("/d", &ty); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(h.RealPath("/d"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0700 {
		t.Errorf("mode %04o, want 0700 (0755 under umask 077)", got)
	}
}

func TestRealPath(t *testing.T) {
	for _, tc := range []struct{ root, pod, want string }{
		{"", "/var/run/x.sock", "/var/run/x.sock"},
		{"/", "/var/run", "/var/run"},
		{"/tmp/h", "/var/run", "/tmp/h/var/run"},
		{"/tmp/h/", "relative/p", "/tmp/h/relative/p"},
		{"/tmp/h", "/", "/tmp/h"},
	} {
		if got := (Host{Root: tc.root}).RealPath(tc.pod); got != tc.want {
			t.Errorf("Host{%q}.RealPath(%q) = %q, want %q", tc.root, tc.pod, got, tc.want)
		}
		if got := (Host{Root: tc.root}).podPath(filepath.Join((Host{Root: tc.root}).root(), "/a/b")); got != "/a/b" {
			t.Errorf("Host{%q}.podPath = %q, want /a/b", tc.root, got)
		}
	}
}
