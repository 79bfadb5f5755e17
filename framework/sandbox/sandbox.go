// Package sandbox runs an exec agent (docs/exec-protocol.md) where it can write below its work
// dirs only: in a mount namespace of its own in which every mount is read-only but those dirs.
// An agent that writes through /proc/self/root, through an absolute path or through a hard link
// to a file outside them gets EROFS or EXDEV, and the machine is unchanged
// (docs/exec-protocol.md "The sandbox").
//
// A Sandbox is one OS thread of the harness, locked to its goroutine for good, that left the
// process's mount namespace (unshare(CLONE_NEWNS) acts on the calling thread only), made every
// mount of its new namespace read-only but the Spec's (mount_setattr, Linux 5.12), and starts
// every agent process of its driver: a child is born in the namespace of the thread that forks
// it. No process is re-executed, so a call costs what it costs without a sandbox. The thread
// exits with the Sandbox (Close), and the namespace with the last agent.
//
// Mounts the agent makes below a Shared dir reach the host, because the host made that dir a
// shared mount (MakeShared) and the namespace's copy of it is a peer of the host's; every other
// mount of the namespace is made a slave first, so nothing else the agent mounts leaves it.
//
// It stops accidents and careless agents, not an attacker: the agent runs as root with
// CAP_SYS_ADMIN (it must mount tmpfs and hugetlbfs), and such a process can remount / read-write.
// An agent that must be contained against its will belongs in a container (the container
// target).
package sandbox

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/hostfeature"
	"github.com/volperm/volperm/nodeimpl/mountinfo"
)

// EnvOff, set to "off", runs agents without a sandbox (an agent that must write elsewhere).
const EnvOff = "VOLPERM_AGENT_SANDBOX"

// Spec is what a sandboxed agent may write.
type Spec struct {
	// Shared are directories the host made shared mounts (MakeShared): the agent writes and
	// mounts below them, and the host sees its mounts.
	Shared []string
	// Writable are further files or directories the agent may write (not mount) below.
	Writable []string
	// TmpDir is the agent's TMPDIR; it must be below a Shared or Writable path.
	TmpDir string
}

// Off reports why agents run without a sandbox on this machine, "" when they run in one.
func Off() string {
	if os.Getenv(EnvOff) == "off" {
		return EnvOff + "=off"
	}
	if m := hostfeature.Check(hostfeature.MountSetattr); m != nil {
		return m.Error()
	}
	if m := hostfeature.Check(hostfeature.Root); m != nil {
		return m.Error()
	}
	return ""
}

// Sandbox is a mount namespace of Spec, held by one locked thread that starts the agents in it.
type Sandbox struct {
	spec  Spec
	start chan func()
	once  sync.Once
}

// New makes the namespace of spec (see the package comment).
func New(spec Spec) (*Sandbox, error) {
	for _, p := range append(append([]string{spec.TmpDir}, spec.Shared...), spec.Writable...) {
		if p != "" && !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: %q is not an absolute path", p)
		}
	}
	s := &Sandbox{spec: spec, start: make(chan func())}
	ready := make(chan error)
	go s.hold(ready)
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return s, nil
}

// hold locks a thread other than the main one, makes the namespace on it (enter), tells ready,
// and starts what Start hands it until Close.
func (s *Sandbox) hold(ready chan<- error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The main thread: the runtime never ends it, and /proc/self is its view, so it must
		// never leave the process's namespace. While this goroutine holds it, the new one
		// cannot run here.
		locked := make(chan error)
		go s.hold(locked)
		err := <-locked
		runtime.UnlockOSThread()
		ready <- err
		return
	}
	// Never unlocked: when this goroutine returns, the runtime ends the thread with it, and no
	// other goroutine ever runs in the namespace.
	if err := enter(s.spec); err != nil {
		ready <- err
		return
	}
	ready <- nil
	for f := range s.start {
		f()
	}
}

// Start starts cmd in the namespace (its TMPDIR is the spec's). Pdeathsig, if set, fires when
// the Sandbox is closed or the harness dies: it follows the thread that forked.
func (s *Sandbox) Start(cmd *osexec.Cmd) error {
	if s.spec.TmpDir != "" {
		env := cmd.Env
		if env == nil {
			env = os.Environ()
		}
		cmd.Env = append(slices.DeleteFunc(slices.Clone(env), func(e string) bool { return strings.HasPrefix(e, "TMPDIR=") }), "TMPDIR="+s.spec.TmpDir)
	}
	done := make(chan error, 1)
	s.start <- func() { done <- cmd.Start() }
	return <-done
}

// Close ends the thread; the namespace goes with the last process in it.
func (s *Sandbox) Close() {
	s.once.Do(func() { close(s.start) })
}

// MakeShared bind-mounts dir on itself and makes that mount shared, so that mounts made below
// dir in a sandbox's namespace appear here too. The caller removes the mount with dir
// (caseroot unmounts everything at or below a root before removing it).
func MakeShared(dir string) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("sandbox: bind %s on itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED, ""); err != nil {
		_ = unix.Unmount(dir, unix.MNT_DETACH)
		return fmt.Errorf("sandbox: make %s a shared mount: %w", dir, err)
	}
	return nil
}

// enter runs on the locked thread: it unshares the thread's mount namespace, makes the
// namespace's mounts slaves (but the Shared dirs), binds the Writable paths on themselves, and
// makes every mount read-only but the Shared and Writable ones.
func enter(spec Spec) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare the mount namespace: %w", err)
	}
	if err := ownNamespace(); err != nil {
		return err
	}
	// /proc/thread-self: /proc/self is the thread group leader, which is still in the
	// process's namespace.
	mounts, err := mountinfo.ReadFile("/proc/thread-self/mountinfo")
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if below(m.Point, spec.Shared) {
			continue
		}
		// Each mount on its own: MS_REC would make the Shared dirs' copies slaves too, and the
		// host would no longer see what the agent mounts there. A mount hidden under another is
		// unreachable by path; EINVAL there is harmless.
		if err := unix.Mount("", m.Point, "", unix.MS_SLAVE, ""); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("make %s a slave mount: %w", m.Point, err)
		}
	}
	for _, p := range spec.Writable {
		if err := unix.Mount(p, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s on itself: %w", p, err)
		}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make / read-only: %w", err)
	}
	for _, p := range append(append([]string{}, spec.Shared...), spec.Writable...) {
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make %s writable: %w", p, err)
		}
	}
	return nil
}

// ownNamespace checks that the calling thread is in a mount namespace other than the process's
// (its thread group leader's): no mount is changed before this holds, so the machine's own
// mounts are never made read-only.
func ownNamespace() error {
	thread, err1 := os.Readlink("/proc/thread-self/ns/mnt")
	process, err2 := os.Readlink("/proc/self/ns/mnt")
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("tell the thread's mount namespace from the process's: %w", err)
	}
	if thread == process {
		return fmt.Errorf("the thread is still in the process's mount namespace (%s): refusing to change its mounts", thread)
	}
	return nil
}

// below reports whether p is one of dirs or below one.
func below(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}
