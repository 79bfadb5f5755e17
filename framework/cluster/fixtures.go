package cluster

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework/fixturedriver"
)

// installFlexDriver puts the probe program, which is also the harness's flexVolume driver
// (fixturedriver.Main), into the node's kubelet plugin dir as volperm~fixture/fixture, from a
// pod that mounts the plugin dir; once per target. The kubelet's prober watches the dir (v1.37
// pkg/volume/flexvolume probe.go) and finds the driver at the next volume it sets up.
func (t *Target) installFlexDriver(ctx context.Context, ns, prefix string) error {
	t.mu.Lock()
	done := t.flexInstalled
	t.mu.Unlock()
	if done {
		return nil
	}
	pod := t.probePodSpec(prefix+"-driver", ns, nil)
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = []corev1.Volume{{Name: "plugins", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: t.opts.FlexPluginDir, Type: &dirOrCreate}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "plugins", MountPath: "/plugins"}}
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("create flexVolume driver pod: %w", err)
	}
	t.count(1)
	if err := t.waitRunning(ctx, ns, pod.Name, "flexVolume driver pod"); err != nil {
		return err
	}
	if _, err := t.exec(ctx, ns, pod.Name, []string{ProbeCommand, "-install-driver", "/plugins"}, nil); err != nil {
		return fmt.Errorf("install flexVolume driver %s in %s: %w", fixturedriver.Driver, t.opts.FlexPluginDir, err)
	}
	t.logf("flexVolume driver %s installed in %s on %s", fixturedriver.Driver, t.opts.FlexPluginDir, t.node)
	t.mu.Lock()
	t.flexInstalled = true
	t.mu.Unlock()
	return nil
}

// createFixtures makes every hostPath case's host objects on the node, under the case's root,
// from a pod that mounts HostRoot at the same path (symlinks resolve alike).
func (t *Target) createFixtures(ctx context.Context, ns, prefix string, runs []*caseRun) error {
	var need []*caseRun
	for _, r := range runs {
		if r.host != "" {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	// Not privileged: root with the runtime's default capabilities (CAP_MKNOD for device
	// fixtures) is enough, and privileged asks for capabilities some nodes lack (docs/host-features.md: cap-sys-resource).
	pod := t.probePodSpec(prefix+"-fixtures", ns, nil)
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	pod.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: HostRoot, Type: &dirOrCreate}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: HostRoot}}
	if err := t.startHelper(ctx, pod, "fixture pod"); err != nil {
		return err
	}
	t.makeFixtures(ctx, ns, pod.Name, need)
	return nil
}

// makeFixtures makes each run's host objects under its root (r.host) through the fixture pod
// (running in ns); a run whose objects could not be made gets that error.
func (t *Target) makeFixtures(ctx context.Context, ns, fixturePod string, runs []*caseRun) {
	for _, r := range runs {
		req, err := json.Marshal(map[string]any{"root": r.host, "objects": r.c.Host})
		if err != nil {
			r.err = err
			continue
		}
		if _, err := t.exec(ctx, ns, fixturePod, []string{ProbeCommand, "-fixtures", string(req)}, nil); err != nil {
			r.err = fmt.Errorf("host fixtures: %w", err)
		}
	}
}
