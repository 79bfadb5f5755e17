package execagent

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volperm/volperm/framework/owner"
)

// killSurvivors kills every process but except whose environment carries token (the agent's
// daemons, however detached: setsid, double fork) and names each as "pid N (comm)". except is
// the serving agent: what it started and still runs is looked for among its descendants.
func killSurvivors(token string, except int) []string {
	want := []byte(envCallToken + "=" + token + "\x00")
	self := os.Getpid()
	deadline := time.Now().Add(execWait)
	var left []string
	// Twice: a survivor may fork while the first pass runs (its children, re-parented here
	// when it is killed, are the second pass's).
	for pass := 0; pass < 2; pass++ {
		for queue := candidates(self, except); len(queue) > 0; queue = queue[1:] {
			pid := queue[0]
			name := strconv.Itoa(pid)
			if pid == self || pid == except {
				continue
			}
			if !bytes.Contains(environ(pid, deadline), want) {
				continue
			}
			// A carrier's children may carry the token too (a process that drops it is no
			// survivor here, as it never was).
			if subreaper() {
				queue = append(queue, children(pid)...)
			}
			comm, _ := os.ReadFile("/proc/" + name + "/comm")
			if syscall.Kill(pid, syscall.SIGKILL) != nil {
				continue
			}
			reap(pid, self)
			if pass == 0 {
				left = append(left, fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(string(comm))))
			}
		}
	}
	return left
}

// execWait bounds how long one killSurvivors waits for processes still inside execve (environ).
const execWait = 2 * time.Second

// environ reads the environment of process pid. A process inside execve, past the point where
// its parent's fork returns (os/exec's Start has returned) and before the kernel has written
// its new stack (create_elf_tables), reads as empty: /proc's environ and cmdline are empty
// until mm->env_end is set. A daemon an agent started a moment before it answered may be
// there still; read once, it carried no token, and the call that left it running passed (the
// serve-daemon verdict of CI on 44b3774; right after Start, environ was empty 745 times in 5000
// on this machine). So an empty environment is read again, every millisecond until deadline,
// while the process looks like it is inside execve (exec): a process that has an empty
// environment for good (env -i) costs a few tries, a kernel thread or a zombie none.
func environ(pid int, deadline time.Time) []byte {
	for try := 0; ; try++ {
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err != nil || len(env) > 0 || !inExec(pid, try) || time.Now().After(deadline) {
			return env
		}
		time.Sleep(time.Millisecond)
	}
}

// inExec reports whether process pid, whose environment read as empty on try try, may be
// inside execve: it is not a kernel thread (PF_KTHREAD in stat's flags) or a zombie, and its
// command line is empty too (the kernel sets both together; for the moment between the two,
// and for a process whose environment is empty for good, the first tries say yes).
func inExec(pid, try int) bool {
	// State is field 3, flags field 9.
	f, err := owner.Stat(pid)
	if err != nil || len(f) < 7 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	if flags, err := strconv.ParseUint(f[6], 10, 64); err != nil || flags&pfKthread != 0 {
		return false
	}
	if try < 3 {
		return true
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && len(cmdline) == 0
}

// pfKthread is the kernel's PF_KTHREAD (include/linux/sched.h): the process is a kernel thread.
const pfKthread = 0x00200000

// subreaper makes this process the subreaper of what its agents leave (prctl
// PR_SET_CHILD_SUBREAPER, set before the first agent starts: startCmd): a survivor whose parent
// exited (a daemon's double fork, an agent driven a process per call) is re-parented to this
// process, not to init, so that every survivor is a child of this process's main thread or a
// descendant of the serving agent, and killSurvivors reads the environment of those only, not
// of every process of the machine (in CI, the kind clusters' hundreds: a whole scan after every
// call was 15 % of upstream@matrix's CPU on a quiet machine; issue 34). Only token carriers are
// descended into: every thread of every process of the run would cost more than the scan. Where
// the kernel does not list a task's children (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN)
// or refuses the prctl, every process is read, as before.
var subreaper = sync.OnceValue(func() bool {
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid())); err != nil {
		return false
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
})

// candidates are where killSurvivors begins: when this process is the subreaper, the children
// of its main thread (the kernel hands an orphan to the subreaper's thread-group leader: every
// survivor whose parent exited is one) and those of the serving agent except (its survivors
// are its descendants, or orphans, above); else every process of the machine.
func candidates(self, except int) []int {
	if subreaper() {
		pids := taskChildren(self, self)
		if except != 0 {
			pids = append(pids, children(except)...)
		}
		return pids
	}
	procs, _ := os.ReadDir("/proc")
	pids := make([]int, 0, len(procs))
	for _, p := range procs {
		if pid, err := strconv.Atoi(p.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// children lists the children of every task (thread) of pid.
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			out = append(out, taskChildren(pid, tid)...)
		}
	}
	return out
}

// taskChildren lists the children of task tid of process pid.
func taskChildren(pid, tid int) []int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/children")
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if c, err := strconv.Atoi(f); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// reap waits, in the background, for a killed survivor this process adopted as its subreaper:
// no zombie is left in the run. Only an adopted one: a child this process started itself is
// os/exec's to wait for, and the agents (the only children carrying a token) are waited for
// before killSurvivors runs or excepted.
func reap(pid, self int) {
	// Its parent is field 4.
	if f, err := owner.Stat(pid); err != nil || len(f) < 2 || f[1] != strconv.Itoa(self) {
		return
	}
	go func() { _, _ = unix.Wait4(pid, nil, 0, nil) }()
}
