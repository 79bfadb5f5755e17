// Package scratch finds a tmpfs for temporary case roots (/dev/shm), and checks that a work dir
// lets the probes, which run as other uids, reach what is below it. Both framework/caseroot and
// its tests' helper (caseroottest) use it.
package scratch

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Dir is the tmpfs every Linux machine mounts for shared memory.
const Dir = "/dev/shm"

// minFree is the room Usable wants on Dir: a case root holds a few files (the largest, an
// fsGroup walk of 2000 empty files), and roots are removed case by case.
const minFree = 1 << 30

// stNodev and stNoexec are statfs(2)'s f_flags ST_NODEV and ST_NOEXEC.
const (
	stNodev  = 0x4
	stNoexec = 0x8
)

// tmpfsMagic is TMPFS_MAGIC (linux/magic.h), statfs(2)'s f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// Usable returns Dir when it is a tmpfs with minFree bytes free that other users can reach,
// else "". The reference target's roots may be there whatever its mount options: the whole
// catalogue passed on a tmpfs mounted nosuid,nodev,noexec (as systemd mounts /dev/shm).
func Usable() string { return usableAt(Dir, false) }

// UsableForAnyTarget is Usable for roots of any target: also not mounted nodev or noexec (the
// upstream kubelet executes the flexVolume fixture driver from its case root, and a target may
// open the device nodes of hostPath fixtures).
func UsableForAnyTarget() string { return usableAt(Dir, true) }

// usableAt is Usable of dir; execDev also refuses nodev and noexec.
func usableAt(dir string, execDev bool) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	if execDev && st.Flags&(stNodev|stNoexec) != 0 {
		return ""
	}
	if uint64(st.Bavail)*uint64(st.Bsize) < minFree || Searchable(dir) != nil {
		return ""
	}
	return dir
}

// Searchable checks that every directory from / to dir lets other users through (o+x): probes
// run as other uids and would see EACCES before they reach a volume.
func Searchable(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := abs; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0001 == 0 {
			return fmt.Errorf("work dir %s: %s is mode %04o, other users cannot pass through it, and probes run as other uids: give a work dir whose parents are all o+x (e.g. mode 0755)", dir, d, st.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
