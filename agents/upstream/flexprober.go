package main

import (
	"sync"

	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/utils/exec"
)

// The flexVolume prober of the agent's process: the real one (pkg/volume/flexvolume probe.go),
// made once, as a kubelet makes it once for its life. A kubelet per call with a prober of its
// own would leave a watcher per call behind where releases before v1.36 cannot stop one (an
// inotify instance each: 128 per user by default), and a watcher makes the plugin dir again
// when it is removed. Each call's plugin manager gets a flexView: the plugins the real prober
// found, once.
//
// A probe that failed (probe.go probeAll: a driver whose init call failed is skipped, with an
// error) is not kept for the process's life: the next call's kubelet probes the plugin dir
// again with a prober of its own, as a kubelet started again does. Kept, one failed init call
// (seen under load average 50: every later flexVolume of an upstream@matrix run answered "no
// volume plugin matched", on every cell) failed every flexVolume case the process served after
// it. A watcher per failure only is left behind.
var (
	flexMu      sync.Mutex
	flexProbed  bool
	flexPlugins []volume.ProbeEvent
	flexErr     error
)

// flexView is one plugin manager's view of the process's prober (volume.DynamicPluginProber).
type flexView struct {
	dir    string // the plugin dir, the same for every call of the process (node.flexDir)
	probed bool
}

// Init starts the real prober the first time, and again after a probe that failed: it makes
// the plugin dir, watches it and probes every driver in it (the fixture driver is installed
// before).
func (v *flexView) Init() error {
	flexMu.Lock()
	defer flexMu.Unlock()
	if flexProbed && flexErr == nil {
		return nil
	}
	p := newFlexProber(v.dir, exec.New())
	if flexErr = p.Init(); flexErr == nil {
		flexPlugins, flexErr = p.Probe()
	}
	flexProbed = true
	return flexErr
}

// Probe hands the drivers found to the plugin manager, which initialises each with its host.
func (v *flexView) Probe() ([]volume.ProbeEvent, error) {
	if v.probed {
		return nil, nil
	}
	v.probed = true
	flexMu.Lock()
	defer flexMu.Unlock()
	return flexPlugins, flexErr
}

// flexProbeError is the error of the prober's last Init, nil when it found the drivers or has
// not run: a volume no plugin matched names it, as a kubelet's log would (a watcher that could
// not be made when root's inotify instances, fs.inotify.max_user_instances, are used up by kind
// nodes beside the agent: every flexVolume of the call then answered only "no volume plugin
// matched").
func flexProbeError() error {
	flexMu.Lock()
	defer flexMu.Unlock()
	return flexErr
}
