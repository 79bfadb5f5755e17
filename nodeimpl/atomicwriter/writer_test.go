package atomicwriter

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/volperm/volperm/hostfeature"

	"github.com/volperm/volperm/nodeimpl/ownership"
)

// The reference kubelet runs at umask 022 (docs/spec.md "Node: volume set-up").
func TestMain(m *testing.M) {
	syscall.Umask(022)
	os.Exit(m.Run())
}

const fsGroup = int64(2000)

func requireRoot(t *testing.T) {
	t.Helper()
	hostfeature.Need(t, hostfeature.Root) // needs root: the layout is checked with fsGroup ownership
}

var tsName = regexp.MustCompile(`^\.\.\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}\.\d+$`)

// entry is one lstat'ed path of a volume, the timestamp dir written `..TS`.
type entry struct {
	Path string
	Type string // d, f, l
	Mode string // 4 octal digits; symlinks 0777
	UID  uint32
	GID  uint32
	Link string
	Data string
}

func (e entry) String() string {
	return fmt.Sprintf("%s %s %s uid=%d gid=%d link=%q data=%q", e.Path, e.Type, e.Mode, e.UID, e.GID, e.Link, e.Data)
}

// diffTrees describes how got differs from want, "" when equal.
func diffTrees(want, got []entry) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	var b strings.Builder
	b.WriteString("want:\n")
	for _, e := range want {
		fmt.Fprintf(&b, "  %v\n", e)
	}
	b.WriteString("got:\n")
	for _, e := range got {
		fmt.Fprintf(&b, "  %v\n", e)
	}
	return b.String()
}

// tree lists root and everything below it, sorted, never following symlinks.
func tree(t *testing.T, root string) []entry {
	t.Helper()
	var out []entry
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(rel, "/")
		for i, part := range parts {
			if tsName.MatchString(part) {
				parts[i] = "..TS"
			}
		}
		st := info.Sys().(*syscall.Stat_t)
		e := entry{Path: strings.Join(parts, "/"), Mode: fmt.Sprintf("%04o", st.Mode&07777), UID: st.Uid, GID: st.Gid}
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			e.Type = "l"
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if tsName.MatchString(link) {
				link = "..TS"
			}
			e.Link = link
		case info.IsDir():
			e.Type = "d"
		default:
			e.Type = "f"
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Data = string(b)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", root, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// volumeRoot is a fresh volume root with mode 0777 (configMap's wrapped emptyDir).
func volumeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Chmod(root, 0777); err != nil {
		t.Fatal(err)
	}
	return root
}

func walkWith(root string, readOnly bool) func() error {
	g := fsGroup
	return func() error { return ownership.Apply(root, &g, readOnly, nil) }
}

var nested = map[string]FileProjection{
	"top":      {Data: []byte("t"), Mode: 0400},
	"dir/a":    {Data: []byte("a"), Mode: 0644},
	"dir/b/c":  {Data: []byte("c"), Mode: 0600},
	"exec":     {Data: []byte("x"), Mode: 0755},
	"nothing":  {Data: []byte("n"), Mode: 0},
	"./tidied": {Data: []byte("d"), Mode: 0444},
}

// The first write's full layout, without and with the fsGroup walk as setPerms.
func TestWriteLayout(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		setPerms func(root string) func() error
		want     []entry
	}{
		{
			name:     "no setPerms",
			setPerms: func(string) func() error { return nil },
			want: []entry{
				{Path: ".", Type: "d", Mode: "0777"},
				// v1.37 newTimestampDir: chmod 0755; nested dirs MkdirAll 0777 at umask 022.
				{Path: "..TS", Type: "d", Mode: "0755"},
				{Path: "..TS/dir", Type: "d", Mode: "0755"},
				{Path: "..TS/dir/a", Type: "f", Mode: "0644", Data: "a"},
				{Path: "..TS/dir/b", Type: "d", Mode: "0755"},
				{Path: "..TS/dir/b/c", Type: "f", Mode: "0600", Data: "c"},
				{Path: "..TS/exec", Type: "f", Mode: "0755", Data: "x"},
				{Path: "..TS/nothing", Type: "f", Mode: "0000", Data: "n"},
				{Path: "..TS/tidied", Type: "f", Mode: "0444", Data: "d"},
				{Path: "..TS/top", Type: "f", Mode: "0400", Data: "t"},
				{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
				{Path: "dir", Type: "l", Mode: "0777", Link: "..data/dir"},
				{Path: "exec", Type: "l", Mode: "0777", Link: "..data/exec"},
				{Path: "nothing", Type: "l", Mode: "0777", Link: "..data/nothing"},
				{Path: "tidied", Type: "l", Mode: "0777", Link: "..data/tidied"},
				{Path: "top", Type: "l", Mode: "0777", Link: "..data/top"},
			},
		},
		{
			// setPerms runs before ..data and the user-visible links exist; they still get
			// the fsGroup because the walk left the root setgid with gid fsGroup.
			name:     "fsGroup walk, read-only mask",
			setPerms: func(root string) func() error { return walkWith(root, true) },
			want: []entry{
				{Path: ".", Type: "d", Mode: "2777", GID: 2000},
				{Path: "..TS", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/dir", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/dir/a", Type: "f", Mode: "0644", GID: 2000, Data: "a"},
				{Path: "..TS/dir/b", Type: "d", Mode: "2755", GID: 2000},
				{Path: "..TS/dir/b/c", Type: "f", Mode: "0640", GID: 2000, Data: "c"},
				{Path: "..TS/exec", Type: "f", Mode: "0755", GID: 2000, Data: "x"},
				{Path: "..TS/nothing", Type: "f", Mode: "0440", GID: 2000, Data: "n"},
				{Path: "..TS/tidied", Type: "f", Mode: "0444", GID: 2000, Data: "d"},
				{Path: "..TS/top", Type: "f", Mode: "0440", GID: 2000, Data: "t"},
				{Path: "..data", Type: "l", Mode: "0777", GID: 2000, Link: "..TS"},
				{Path: "dir", Type: "l", Mode: "0777", GID: 2000, Link: "..data/dir"},
				{Path: "exec", Type: "l", Mode: "0777", GID: 2000, Link: "..data/exec"},
				{Path: "nothing", Type: "l", Mode: "0777", GID: 2000, Link: "..data/nothing"},
				{Path: "tidied", Type: "l", Mode: "0777", GID: 2000, Link: "..data/tidied"},
				{Path: "top", Type: "l", Mode: "0777", GID: 2000, Link: "..data/top"},
			},
		},
		{
			name:     "fsGroup walk, read-write mask",
			setPerms: func(root string) func() error { return walkWith(root, false) },
			want: []entry{
				{Path: ".", Type: "d", Mode: "2777", GID: 2000},
				{Path: "..TS", Type: "d", Mode: "2775", GID: 2000},
				{Path: "..TS/dir", Type: "d", Mode: "2775", GID: 2000},
				{Path: "..TS/dir/a", Type: "f", Mode: "0664", GID: 2000, Data: "a"},
				{Path: "..TS/dir/b", Type: "d", Mode: "2775", GID: 2000},
				{Path: "..TS/dir/b/c", Type: "f", Mode: "0660", GID: 2000, Data: "c"},
				{Path: "..TS/exec", Type: "f", Mode: "0775", GID: 2000, Data: "x"},
				{Path: "..TS/nothing", Type: "f", Mode: "0660", GID: 2000, Data: "n"},
				{Path: "..TS/tidied", Type: "f", Mode: "0664", GID: 2000, Data: "d"},
				{Path: "..TS/top", Type: "f", Mode: "0660", GID: 2000, Data: "t"},
				{Path: "..data", Type: "l", Mode: "0777", GID: 2000, Link: "..TS"},
				{Path: "dir", Type: "l", Mode: "0777", GID: 2000, Link: "..data/dir"},
				{Path: "exec", Type: "l", Mode: "0777", GID: 2000, Link: "..data/exec"},
				{Path: "nothing", Type: "l", Mode: "0777", GID: 2000, Link: "..data/nothing"},
				{Path: "tidied", Type: "l", Mode: "0777", GID: 2000, Link: "..data/tidied"},
				{Path: "top", Type: "l", Mode: "0777", GID: 2000, Link: "..data/top"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := volumeRoot(t)
			if err := Write(root, nested, tc.setPerms(root)); err != nil {
				t.Fatal(err)
			}
			if diff := diffTrees(tc.want, tree(t, root)); diff != "" {
				t.Errorf("layout \n%s", diff)
			}
		})
	}
}

// setPerms runs after the payload is written and before ..data is swapped and before new
// user-visible links exist (v1.37 AtomicWriter.Write steps 6-10), on the first write and on
// an update.
func TestWriteSetPermsPlacement(t *testing.T) {
	requireRoot(t)
	root := volumeRoot(t)
	type seen struct {
		tsDirs    []string
		data      string
		hasOld    bool
		hasNew    bool
		newInTs   string
		tsDirMode string
	}
	var got []seen
	record := func() error {
		var s seen
		names, err := os.ReadDir(root)
		if err != nil {
			return err
		}
		for _, n := range names {
			if tsName.MatchString(n.Name()) {
				s.tsDirs = append(s.tsDirs, n.Name())
			}
		}
		s.data, _ = os.Readlink(filepath.Join(root, "..data"))
		_, errOld := os.Lstat(filepath.Join(root, "old"))
		_, errNew := os.Lstat(filepath.Join(root, "new"))
		s.hasOld, s.hasNew = errOld == nil, errNew == nil
		for _, ts := range s.tsDirs {
			if ts == s.data {
				continue
			}
			b, _ := os.ReadFile(filepath.Join(root, ts, "new"))
			s.newInTs = string(b)
			fi, err := os.Stat(filepath.Join(root, ts))
			if err != nil {
				return err
			}
			s.tsDirMode = fmt.Sprintf("%04o", fi.Mode().Perm())
		}
		got = append(got, s)
		return nil
	}

	first := map[string]FileProjection{"old": {Data: []byte("1"), Mode: 0644}}
	if err := Write(root, first, record); err != nil {
		t.Fatal(err)
	}
	second := map[string]FileProjection{"old": {Data: []byte("1"), Mode: 0644}, "new": {Data: []byte("2"), Mode: 0644}}
	if err := Write(root, second, record); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("setPerms called %d times, want 2", len(got))
	}
	// First write: only the new timestamp dir, no ..data, no user-visible link.
	if f := got[0]; len(f.tsDirs) != 1 || f.data != "" || f.hasOld || f.tsDirMode != "0755" {
		t.Errorf("first write, at setPerms: %+v; want one 0755 ts dir, no ..data, no links", f)
	}
	// Update: the old and the new ts dir, ..data still the old one, the old link present,
	// the new name written in the new ts dir but not yet linked.
	if u := got[1]; len(u.tsDirs) != 2 || u.data == "" || !u.hasOld || u.hasNew || u.newInTs != "2" {
		t.Errorf("update, at setPerms: %+v; want old+new ts dirs, ..data on the old, link old only, new written", u)
	}
}

// An update swaps ..data to a new timestamp dir, removes the old one and the names that left
// the payload, and adds the new names.
func TestWriteUpdate(t *testing.T) {
	requireRoot(t)
	root := volumeRoot(t)
	v1 := map[string]FileProjection{
		"keep":     {Data: []byte("k"), Mode: 0644},
		"change":   {Data: []byte("old"), Mode: 0644},
		"gone":     {Data: []byte("g"), Mode: 0644},
		"dir/gone": {Data: []byte("dg"), Mode: 0644},
		"dir/stay": {Data: []byte("ds"), Mode: 0644},
	}
	v2 := map[string]FileProjection{
		"keep":     {Data: []byte("k"), Mode: 0644},
		"change":   {Data: []byte("new"), Mode: 0600},
		"added":    {Data: []byte("a"), Mode: 0400},
		"dir/stay": {Data: []byte("ds"), Mode: 0644},
	}
	if err := Write(root, v1, nil); err != nil {
		t.Fatal(err)
	}
	oldTs, err := os.Readlink(filepath.Join(root, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(root, v2, nil); err != nil {
		t.Fatal(err)
	}
	newTs, err := os.Readlink(filepath.Join(root, "..data"))
	if err != nil {
		t.Fatal(err)
	}
	if newTs == oldTs {
		t.Fatalf("..data still points at %s", oldTs)
	}
	if _, err := os.Lstat(filepath.Join(root, oldTs)); !os.IsNotExist(err) {
		t.Errorf("old timestamp dir %s still there (%v)", oldTs, err)
	}
	want := []entry{
		{Path: ".", Type: "d", Mode: "0777"},
		{Path: "..TS", Type: "d", Mode: "0755"},
		{Path: "..TS/added", Type: "f", Mode: "0400", Data: "a"},
		{Path: "..TS/change", Type: "f", Mode: "0600", Data: "new"},
		{Path: "..TS/dir", Type: "d", Mode: "0755"},
		{Path: "..TS/dir/stay", Type: "f", Mode: "0644", Data: "ds"},
		{Path: "..TS/keep", Type: "f", Mode: "0644", Data: "k"},
		{Path: "..data", Type: "l", Mode: "0777", Link: "..TS"},
		{Path: "added", Type: "l", Mode: "0777", Link: "..data/added"},
		{Path: "change", Type: "l", Mode: "0777", Link: "..data/change"},
		{Path: "dir", Type: "l", Mode: "0777", Link: "..data/dir"},
		{Path: "keep", Type: "l", Mode: "0777", Link: "..data/keep"},
	}
	if diff := diffTrees(want, tree(t, root)); diff != "" {
		t.Errorf("layout after update \n%s", diff)
	}
}

// v1.37 shouldWritePayload: same content (modes are not compared) and nothing to remove ->
// no new timestamp dir, no setPerms; missing user-visible links are still recreated.
func TestWriteUnchanged(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name    string
		second  map[string]FileProjection
		tamper  func(root string) error
		rewrite bool
	}{
		{name: "same payload", second: map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0644}, "d/b": {Data: []byte("2"), Mode: 0600}}},
		{name: "only a mode changed", second: map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0400}, "d/b": {Data: []byte("2"), Mode: 0600}}},
		{
			name:   "a user-visible link was deleted",
			second: map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0644}, "d/b": {Data: []byte("2"), Mode: 0600}},
			tamper: func(root string) error { return os.Remove(filepath.Join(root, "a")) },
		},
		{name: "content changed", second: map[string]FileProjection{"a": {Data: []byte("X"), Mode: 0644}, "d/b": {Data: []byte("2"), Mode: 0600}}, rewrite: true},
		{name: "a name left", second: map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0644}}, rewrite: true},
	}
	first := map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0644}, "d/b": {Data: []byte("2"), Mode: 0600}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := volumeRoot(t)
			if err := Write(root, first, walkWith(root, true)); err != nil {
				t.Fatal(err)
			}
			before := tree(t, root)
			ts, _ := os.Readlink(filepath.Join(root, "..data"))
			if tc.tamper != nil {
				if err := tc.tamper(root); err != nil {
					t.Fatal(err)
				}
			}
			calls := 0
			if err := Write(root, tc.second, func() error { calls++; return nil }); err != nil {
				t.Fatal(err)
			}
			after, _ := os.Readlink(filepath.Join(root, "..data"))
			if rewrote := after != ts; rewrote != tc.rewrite || (calls == 1) != tc.rewrite {
				t.Fatalf("..data %s -> %s, setPerms calls %d; want rewrite=%v", ts, after, calls, tc.rewrite)
			}
			if !tc.rewrite {
				if diff := diffTrees(before, tree(t, root)); diff != "" {
					t.Errorf("volume changed \n%s", diff)
				}
			}
		})
	}
}

// Links are created by the kubelet (uid 0, gid 0) after setPerms: they get the fsGroup only
// through a setgid root (the walk leaves the root setgid with gid fsGroup), never by lchown.
func TestWriteLinksTakeTheRootGroup(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name    string
		rootGID int
		mode    os.FileMode
		wantGID uint32
	}{
		{"setgid root with gid fsGroup", int(fsGroup), 0777 | os.ModeSetgid, uint32(fsGroup)},
		{"plain root with gid fsGroup", int(fsGroup), 0777, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := volumeRoot(t)
			if err := os.Chown(root, 0, tc.rootGID); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := Write(root, map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0644}}, nil); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"..data", "a"} {
				var st syscall.Stat_t
				if err := syscall.Lstat(filepath.Join(root, p), &st); err != nil {
					t.Fatal(err)
				}
				if st.Gid != tc.wantGID {
					t.Errorf("%s gid %d, want %d", p, st.Gid, tc.wantGID)
				}
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	requireRoot(t)
	tests := []struct {
		name     string
		payload  map[string]FileProjection
		setPerms func() error
		want     string
	}{
		{"dotdot element", map[string]FileProjection{"a/../b": {}}, nil, "invalid path: must not contain '..': a/../b"},
		{"absolute", map[string]FileProjection{"/etc/x": {}}, nil, "invalid path: must be relative path: /etc/x"},
		{"reserved prefix", map[string]FileProjection{"..data/x": {}}, nil, "invalid path: must not start with '..': ..data/x"},
		{"empty", map[string]FileProjection{"": {}}, nil, `invalid path: must not be empty: ""`},
		{"long name", map[string]FileProjection{strings.Repeat("x", 256): {}}, nil, "invalid path: filenames must be less than or equal to 255 characters"},
		{"setPerms fails", map[string]FileProjection{"a": {Data: []byte("1"), Mode: 0644}}, func() error { return fmt.Errorf("walk failed") }, "walk failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := volumeRoot(t)
			err := Write(root, tc.payload, tc.setPerms)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			// Nothing is published: no ..data, no user-visible link.
			for _, e := range tree(t, root) {
				if e.Type == "l" {
					t.Errorf("published %s after a failed write", e.Path)
				}
			}
		})
	}
	t.Run("missing target", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing")
		if err := Write(missing, nil, nil); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("got %v, want an error naming %s", err, missing)
		}
	})
}
