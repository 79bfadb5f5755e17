// Package userns is the reference node's user namespaces for pods with hostUsers: false
// (KEP-127): the kubelet's range allocation (v1.37 pkg/kubelet/userns/userns_manager.go) and
// the runtime's idmapped volume mounts (what containerd asks runc for with every CRI Mount's
// uidMappings, v1.37 kuberuntime_container_linux.go). docs/spec.md "User namespaces".
package userns

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/nodeimpl/mountinfo"
	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Length is the ids of one pod: v1.37 kubeletconfig DefaultKubeletUserNamespacesIDsPerPod.
const Length = 65536

// slots is how many ranges the default kubelet mapping holds: first id Length, length
// 2^32-Length (v1.37 kubelet_pods.go getKubeletMappings without a "kubelet" user).
const slots = (1<<32)/Length - 1

// Mapping is a pod's range: ids 0..Length-1 in the pod are HostID.. on the node.
type Mapping struct {
	HostID uint32
	Length uint32
}

// fileName is the pod directory's record of its range (v1.37 userns_manager.go mappingsFile).
const fileName = "userns"

// record is the file's format (v1.37 userns_manager.go userNamespace).
type record struct {
	UIDMappings []idMapping `json:"uidMappings"`
	GIDMappings []idMapping `json:"gidMappings"`
}

type idMapping struct {
	HostID      uint32 `json:"hostId"`
	ContainerID uint32 `json:"containerId"`
	Length      uint32 `json:"length"`
}

// Allocate is the kubelet's GetOrCreateUserNamespaceMappings for the pod whose directory is
// podDir under podsDir: the range recorded in podDir, or a free one, recorded there (kept
// across a kubelet restart). Ranges are Length ids, aligned to Length, never 0..Length-1 and
// disjoint from every other pod's in podsDir (v1.37 allocateOne: a random free slot).
func Allocate(podsDir, podDir string) (Mapping, error) {
	if m, err := read(podDir); err == nil && !mutant.On(mutant.UsernsRangeLostOnRestart) {
		return m, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Mapping{}, err
	}
	used := map[uint32]bool{}
	others, _ := filepath.Glob(filepath.Join(podsDir, "*", fileName))
	for _, f := range others {
		if m, err := read(filepath.Dir(f)); err == nil {
			used[m.HostID/Length] = true
		}
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Mapping{}, err
	}
	start := binary.LittleEndian.Uint32(b[:]) % slots
	for i := uint32(0); i < slots; i++ {
		slot := 1 + (start+i)%slots
		if used[slot] {
			continue
		}
		m := Mapping{HostID: slot * Length, Length: Length}
		if mutant.On(mutant.UsernsRangeUnaligned) {
			m.HostID -= Length / 2
		}
		if mutant.On(mutant.UsernsRangeShort) {
			m.Length = Length / 2
		}
		return m, write(podDir, m)
	}
	return Mapping{}, errors.New("could not find an empty slot to allocate a user namespace")
}

func read(podDir string) (Mapping, error) {
	b, err := os.ReadFile(filepath.Join(podDir, fileName))
	if err != nil {
		return Mapping{}, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil || len(r.UIDMappings) != 1 {
		return Mapping{}, fmt.Errorf("user namespace record %s: %q is not one uid mapping", filepath.Join(podDir, fileName), b)
	}
	u := r.UIDMappings[0]
	return Mapping{HostID: u.HostID, Length: u.Length}, nil
}

func write(podDir string, m Mapping) error {
	one := []idMapping{{HostID: m.HostID, ContainerID: 0, Length: m.Length}}
	b, err := json.Marshal(record{UIDMappings: one, GIDMappings: one})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(podDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(podDir, fileName), b, 0o600)
}

// holdEnv makes this binary, re-executed, a process that holds a user namespace open until its
// stdin closes (Namespace).
const holdEnv = "VOLPERM_USERNS_HOLD"

func init() {
	if os.Getenv(holdEnv) == "1" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
}

// Namespace is a user namespace of mapping m (uids and gids alike), open until Close.
type Namespace struct {
	// cmd holds the namespace open until Close when the namespace was made by a holding child
	// (holdEnv); nil when File alone holds it.
	cmd   *exec.Cmd
	stdin io.Closer
	// File is the namespace (/proc/PID/ns/user), open.
	File *os.File
}

// NewNamespace starts a child in a new user namespace of m and opens the namespace.
func NewNamespace(m Mapping) (*Namespace, error) { return newNamespace(m, m) }

// newNamespace is NewNamespace with uids mapped by u and gids by g. The child is stopped by
// the kernel at its execve (PTRACE_TRACEME), before any of its code runs, the namespace opened
// and the child killed: the open file holds the namespace (runc's usernsfd_linux.go spawnProc,
// which mount_setattr MOUNT_ATTR_IDMAP needs and nothing more). An exec of this binary that
// runs costs its Go runtime and package initialisation, about 20 ms, once per idmapped mount:
// most of the userns area's time. Where ptrace is refused (a seccomp profile, Yama's
// ptrace_scope 3), a child that runs and holds the namespace until Close (holdEnv).
func newNamespace(u, g Mapping) (*Namespace, error) {
	uids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(u.HostID), Size: int(u.Length)}}
	gids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: int(g.HostID), Size: int(g.Length)}}
	if stopAtExec {
		if ns, err := stoppedNamespace(uids, gids); err == nil {
			return ns, nil
		}
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = []string{holdEnv + "=1"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: uids, GidMappings: gids}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("user namespace %d+%d: %w", u.HostID, u.Length, err)
	}
	ns := &Namespace{cmd: cmd, stdin: in}
	if ns.File, err = os.Open(fmt.Sprintf("/proc/%d/ns/user", cmd.Process.Pid)); err != nil {
		ns.Close()
		return nil, err
	}
	return ns, nil
}

// stopAtExec: newNamespace tries stoppedNamespace first (false in a test of the other way).
var stopAtExec = true

// stoppedNamespace is newNamespace's child stopped at its execve: the kernel has made the
// namespace and Go's fork has written its maps when StartProcess returns (the exec succeeded).
func stoppedNamespace(uids, gids []syscall.SysProcIDMap) (*Namespace, error) {
	proc, err := os.StartProcess("/proc/self/exe", []string{"volperm-userns"}, &os.ProcAttr{
		Dir: "/",
		Env: []string{holdEnv + "=1"},
		Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: uids, GidMappings: gids, Ptrace: true},
	})
	if err != nil {
		return nil, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", proc.Pid))
	_ = proc.Kill()
	_, _ = proc.Wait()
	if err != nil {
		return nil, err
	}
	return &Namespace{File: f}, nil
}

// Close ends the namespace's holder; the namespace lives on while a mount made with it does.
func (ns *Namespace) Close() {
	if ns.File != nil {
		ns.File.Close()
	}
	if ns.cmd != nil {
		ns.stdin.Close()
		_ = ns.cmd.Wait()
	}
}

// Mount is the runtime's idmapped bind mount of src at dst (made here: a directory, or an empty
// file for a file): a clone of src's mount tree whose ids are shifted by m, so that an id X on
// disk is X inside the pod's user namespace of m, and an id outside 0..Length-1 has no mapping
// (runc's mountIDMapped: open_tree(OPEN_TREE_CLONE|AT_RECURSIVE), mount_setattr(MOUNT_ATTR_IDMAP),
// move_mount).
func Mount(src, dst string, m Mapping) error {
	// The pod's processes (host ids first..) are "other" on the way down: 0755 like the
	// kubelet's own directories.
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := mountinfo.MakePoint(src, dst); err != nil {
		return err
	}
	tree, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", src, err)
	}
	defer unix.Close(tree)
	idmap := !mutant.On(mutant.UsernsNoIdmap)
	if !fi.IsDir() && mutant.On(mutant.BlindUsernsIdmapFilePlainBind) {
		idmap = false
	}
	if idmap {
		if mutant.On(mutant.UsernsOtherRange) {
			m.HostID += m.Length
		}
		g := m
		if mutant.On(mutant.BlindUsernsIdmapGIDsUnshifted) {
			g.HostID = 0
		}
		ns, err := newNamespace(m, g)
		if err != nil {
			return err
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(ns.File.Fd())}
		err = unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
		ns.Close()
		if err != nil {
			return fmt.Errorf("idmapped mount of %s (mount_setattr MOUNT_ATTR_IDMAP): %w", src, err)
		}
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s to %s: %w", src, dst, err)
	}
	return nil
}
