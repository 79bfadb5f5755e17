package sandbox_test

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/volperm/volperm/framework/sandbox"
	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// TestSandbox runs a shell in a sandbox whose shared dir is work and whose writable file is log.
// Everything it tries outside them fails, a canary beside them is unchanged, and what it mounts
// in work is seen here, while what it mounts elsewhere is not.
func TestSandbox(t *testing.T) {
	hostfeature.Need(t, hostfeature.Root, hostfeature.MountSetattr)
	dir := t.TempDir()
	work, outside := filepath.Join(dir, "work"), filepath.Join(dir, "outside")
	canary, log := filepath.Join(dir, "canary"), filepath.Join(dir, "log")
	for _, d := range []string{work, outside, filepath.Join(work, "tmp")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{canary, log} {
		if err := os.WriteFile(f, []byte("canary"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := sandbox.MakeShared(work); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range []string{filepath.Join(work, "mnt"), work, outside} {
			_ = syscall.Unmount(d, syscall.MNT_DETACH)
		}
	})

	// Each line prints "ok NAME" or "no NAME" and goes on.
	script := `
try() { name=$1; shift; if "$@" 2>/dev/null; then echo "ok $name"; else echo "no $name"; fi; }
try write-canary sh -c "echo x > $CANARY"
try write-proc-root sh -c "echo x > /proc/self/root$CANARY"
try create-beside sh -c "echo x > $DIR/new"
try chmod-canary chmod 0777 $CANARY
try link-canary ln $CANARY $WORK/hard
try write-work sh -c "echo x > $WORK/file"
try mount-work sh -c "mkdir $WORK/mnt && mount -t tmpfs tmpfs $WORK/mnt"
try mount-outside mount -t tmpfs tmpfs $OUTSIDE
try append-log sh -c "echo x >> $LOG"
try tmpdir sh -c "echo x > \$TMPDIR/t && test \$TMPDIR = $WORK/tmp"
`
	sb, err := sandbox.New(sandbox.Spec{Shared: []string{work}, Writable: []string{log}, TmpDir: filepath.Join(work, "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// Twice: the namespace serves every start of its Sandbox.
	for i := 0; i < 2; i++ {
		if i == 1 {
			script = strings.ReplaceAll(script, "mkdir $WORK/mnt && ", "") // mounted already
		}
		cmd := osexec.Command("/bin/sh", "-c", script)
		cmd.Env = append(os.Environ(), "CANARY="+canary, "DIR="+dir, "WORK="+work, "OUTSIDE="+outside, "LOG="+log, "TMPDIR=/elsewhere")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := sb.Start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("sandboxed shell: %v\n%s", err, out.String())
		}
		want := "no write-canary\nno write-proc-root\nno create-beside\nno chmod-canary\nno link-canary\n" +
			"ok write-work\nok mount-work\nok mount-outside\nok append-log\nok tmpdir\n"
		if out.String() != want {
			t.Errorf("sandboxed shell printed\n%s\nwant\n%s", out.String(), want)
		}
	}
	// The harness itself is not in the sandbox.
	if err := os.WriteFile(filepath.Join(dir, "harness"), nil, 0o600); err != nil {
		t.Errorf("the harness cannot write outside the sandbox's dirs: %v", err)
	}
	if b, _ := os.ReadFile(canary); string(b) != "canary" {
		t.Errorf("canary changed: %q", b)
	}
	if st, err := os.Stat(canary); err != nil || st.Mode().Perm() != 0o600 || st.Sys().(*syscall.Stat_t).Nlink != 1 {
		t.Errorf("canary's mode or links changed: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("the sandbox created a file beside its work dir")
	}
	if b, _ := os.ReadFile(log); string(b) != "canaryx\nx\n" {
		t.Errorf("the writable log holds %q, want the sandbox's line appended", b)
	}
	if m, _ := mountinfo.At(filepath.Join(work, "mnt")); m == nil || m.FSType != "tmpfs" {
		t.Errorf("the tmpfs mounted in the shared work dir is not seen here: %v", m)
	}
	if m, _ := mountinfo.AtOrBelow(outside); len(m) > 0 {
		t.Errorf("a mount outside the work dir reached the host: %q", m)
	}
	if m, _ := mountinfo.At(log); m != nil {
		t.Errorf("the writable file's bind mount reached the host")
	}
}

// TestNewRefusesRelativePaths: a spec's paths are absolute.
func TestNewRefusesRelativePaths(t *testing.T) {
	if _, err := sandbox.New(sandbox.Spec{Shared: []string{"work"}}); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("New = %v, want a refusal of the relative path", err)
	}
}

// TestOwnNamespace: on a thread still in the process's mount namespace (as this test's is),
// the sandbox refuses before it changes any mount.
func TestOwnNamespace(t *testing.T) {
	if err := sandbox.OwnNamespace(); err == nil || !strings.Contains(err.Error(), "still in the process's mount namespace") {
		t.Errorf("ownNamespace() = %v, want a refusal", err)
	}
}
