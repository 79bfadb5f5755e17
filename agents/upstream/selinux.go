package main

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/kubelet/volumemanager/cache"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/fc"
	"k8s.io/kubernetes/pkg/volume/iscsi"
	"k8s.io/kubernetes/pkg/volume/nfs"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"

	"github.com/volperm/volperm/framework/execproto"
)

// seLinuxDecision is the real volume manager's decision for one volume of the pod on a node
// with SELinux on (docs/spec.md "SELinux mount decisions"): the label it mounts the volume with,
// or the error that keeps it from mounting it.
type seLinuxDecision struct {
	label string
	err   error
}

// seLinuxDecide runs this release's desired state of the world (cache.NewDesiredStateOfWorld,
// the populator's order: the running pods, then the pod) with upstream's fake translator
// (volperm's, docs/spec.md [selinux.label]) and the kubelet gates in force; for each volume of
// pod a container uses (util.GetPodVolumeNames), AddPodToVolume's error or the label
// GetVolumesToMount gives it. host is the kubelet's (setUp: the plugins' Init keeps it). The real plugins decide their SELinux support (iscsi, fc, nfs and
// the inline ones); the CSI plugin, which needs an API server for its CSIDriver lister, is
// played by csiSELinuxPlugin, the lines of csi_plugin.go SupportsSELinuxContextMount.
func seLinuxDecide(s *execproto.SELinux, pod *corev1.Pod, gates map[string]bool, host volume.VolumeHost) (map[string]seLinuxDecision, error) {
	out := map[string]seLinuxDecision{}
	err := withGates(gates, func() error {
		plugins := inlinePlugins()
		plugins = append(plugins, iscsi.ProbeVolumePlugins()...)
		plugins = append(plugins, fc.ProbeVolumePlugins()...)
		plugins = append(plugins, nfs.ProbeVolumePlugins(volume.VolumeConfig{})...)
		plugins = append(plugins, &csiSELinuxPlugin{drivers: s.CSIDrivers})
		mgr := &volume.VolumePluginMgr{}
		if err := mgr.InitPlugins(plugins, nil, host); err != nil {
			return fmt.Errorf("init volume plugins for the SELinux decision: %w", err)
		}
		dsw := cache.NewDesiredStateOfWorld(mgr, volumeutil.NewFakeSELinuxLabelTranslator())
		logger := klog.Background()
		pods := append(slices.Clone(s.Running), pod)
		for i, p := range pods {
			last := i == len(pods)-1
			mounts, devices, contexts := volumeutil.GetPodVolumeNames(p, true)
			for _, v := range p.Spec.Volumes {
				if !mounts.Has(v.Name) && !devices.Has(v.Name) {
					continue // the populator: "Skipping unused volume"
				}
				spec, err := seLinuxSpec(s, v)
				if err != nil {
					return err
				}
				name, err := dsw.AddPodToVolume(logger, volumeutil.GetUniquePodName(p), p, spec, v.Name, "", contexts[v.Name])
				if !last {
					continue
				}
				if err != nil {
					out[v.Name] = seLinuxDecision{err: err}
					continue
				}
				d := seLinuxDecision{}
				for _, m := range dsw.GetVolumesToMount() {
					if m.VolumeName == name && m.PodName == volumeutil.GetUniquePodName(p) {
						d.label = m.SELinuxLabel
					}
				}
				out[v.Name] = d
			}
		}
		return nil
	})
	return out, err
}

// seLinuxSpec is the populator's createVolumeSpec: a persistentVolumeClaim's PersistentVolume
// (volume.NewSpecFromPersistentVolume, read-only as the claim's volume says), else the inline
// volume.
func seLinuxSpec(s *execproto.SELinux, v corev1.Volume) (*volume.Spec, error) {
	if pvc := v.PersistentVolumeClaim; pvc != nil {
		pv := s.Claims[pvc.ClaimName]
		if pv == nil {
			return nil, fmt.Errorf("claim %q of volume %q is bound to no PersistentVolume in the request's seLinux.claims", pvc.ClaimName, v.Name)
		}
		return volume.NewSpecFromPersistentVolume(pv.DeepCopy(), pvc.ReadOnly), nil
	}
	return volume.NewSpecFromVolume(v.DeepCopy()), nil
}

// csiSELinuxPlugin is the CSI plugin as the volume manager sees it for the decision: it supports
// every csi PersistentVolume, mounts it once per node (a device-mountable plugin: one unique
// volume name for every pod) and answers SupportsSELinuxContextMount as v1.37 csi_plugin.go does
// with the request's CSIDrivers (no CSIDriver object: false; else its spec.seLinuxMount).
type csiSELinuxPlugin struct{ drivers map[string]bool }

var (
	_ volume.VolumePlugin                = &csiSELinuxPlugin{}
	_ volume.DeviceMountableVolumePlugin = &csiSELinuxPlugin{}
)

func (p *csiSELinuxPlugin) Init(volume.VolumeHost) error { return nil }
func (p *csiSELinuxPlugin) GetPluginName() string        { return "volperm.dev/csi-selinux" }
func (p *csiSELinuxPlugin) GetVolumeName(s *volume.Spec) (string, error) {
	pv := s.PersistentVolume
	return pv.Spec.CSI.Driver + "^" + pv.Spec.CSI.VolumeHandle, nil
}
func (p *csiSELinuxPlugin) CanSupport(s *volume.Spec) bool {
	return s.PersistentVolume != nil && s.PersistentVolume.Spec.CSI != nil
}
func (p *csiSELinuxPlugin) RequiresRemount(*volume.Spec) bool { return false }
func (p *csiSELinuxPlugin) NewMounter(*volume.Spec, *corev1.Pod) (volume.Mounter, error) {
	return nil, errors.New("volperm mounts no PersistentVolume")
}
func (p *csiSELinuxPlugin) NewUnmounter(string, types.UID) (volume.Unmounter, error) {
	return nil, errors.New("volperm mounts no PersistentVolume")
}
func (p *csiSELinuxPlugin) ConstructVolumeSpec(string, string) (volume.ReconstructedVolume, error) {
	return volume.ReconstructedVolume{}, errors.New("volperm mounts no PersistentVolume")
}
func (p *csiSELinuxPlugin) SupportsMountOption() bool { return true }
func (p *csiSELinuxPlugin) SupportsSELinuxContextMount(s *volume.Spec) (bool, error) {
	return p.drivers[s.PersistentVolume.Spec.CSI.Driver], nil
}
func (p *csiSELinuxPlugin) NewDeviceMounter() (volume.DeviceMounter, error) {
	// util.IsDeviceMountableVolume asks for one to tell the plugin mounts once per node; the
	// decision never mounts with it.
	return unusedDeviceMounter{}, nil
}

// unusedDeviceMounter is the DeviceMounter IsDeviceMountableVolume wants to see; nothing calls
// its methods (the embedded nil interface would panic: volperm mounts no PersistentVolume).
type unusedDeviceMounter struct{ volume.DeviceMounter }

func (p *csiSELinuxPlugin) NewDeviceUnmounter() (volume.DeviceUnmounter, error) {
	return nil, errors.New("volperm mounts no PersistentVolume")
}
func (p *csiSELinuxPlugin) GetDeviceMountRefs(string) ([]string, error) { return nil, nil }
func (p *csiSELinuxPlugin) CanDeviceMount(*volume.Spec) (bool, error)   { return true, nil }
