package main

import (
	"context"
	"maps"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	storagelistersv1 "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/util/hostutil"
	"k8s.io/kubernetes/pkg/volume/util/subpath"
	"k8s.io/mount-utils"
)

// fakeServiceAccountToken is the token of every projected serviceAccountToken: the reference
// node's (nodeimpl/atomicwriter FakeServiceAccountToken; a test of the upstream target checks
// they are the same), since no apiserver issues one here.
const fakeServiceAccountToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ2b2xwZXJtIn0."

// fakeTrustAnchors, fakeCertificateKey and fakeCertificateChain are what every
// clusterTrustBundle and podCertificate projection holds: the reference node's
// (nodeimpl/atomicwriter FakeTrustAnchors, FakeCertificateKey, FakeCertificateChain; the same
// test checks them), since no cluster issues them here.
const (
	fakeTrustAnchors     = "volperm: fake trust anchors, no certificate"
	fakeCertificateKey   = "volperm: fake private key;"
	fakeCertificateChain = "volperm: fake certificate chain"
)

// nodeName is the name the harness's kubelet reports.
const nodeName = "volperm-node"

// volumeHost is the kubelet's VolumeHost and KubeletVolumeHost (v1.37 pkg/kubelet/volume_host.go)
// for one pod under one root: the directory layout of the real kubelet below root but the
// volume directories the harness gives, the real
// mounter (mount.New("")) and host utils (hostutil.NewHostUtil()), and a fake API server
// holding the pod's secrets and configMaps.
type volumeHost struct {
	root        string
	dirs        map[string]string // volume name -> the directory the harness gave for it
	client      clientset.Interface
	pluginMgr   *volume.VolumePluginMgr
	mounter     mount.Interface
	hostUtil    hostutil.HostUtils
	subpather   subpath.Interface
	allocatable corev1.ResourceList
}

var (
	_ volume.VolumeHost        = (*volumeHost)(nil)
	_ volume.KubeletVolumeHost = (*volumeHost)(nil)
)

// newVolumeHost builds the host for kubelet root dir root. objects are the secrets and
// configMaps the API server holds; allocatable is what the node reports.
func newVolumeHost(root string, dirs map[string]string, objects []runtime.Object, allocatable corev1.ResourceList) *volumeHost {
	mounter := mount.New("")
	return &volumeHost{
		root:        root,
		dirs:        dirs,
		client:      fake.NewClientset(objects...),
		pluginMgr:   &volume.VolumePluginMgr{},
		mounter:     mounter,
		hostUtil:    hostutil.NewHostUtil(),
		subpather:   subpath.New(mounter),
		allocatable: allocatable,
	}
}

// The directory layout is the kubelet's (v1.37 pkg/kubelet/kubelet_getters.go).

func (h *volumeHost) GetPluginDir(pluginName string) string {
	return filepath.Join(h.root, "plugins", pluginName)
}

func (h *volumeHost) GetVolumeDevicePluginDir(pluginName string) string {
	return filepath.Join(h.root, "plugins", pluginName, "volumeDevices")
}

func (h *volumeHost) GetPodsDir() string { return filepath.Join(h.root, "pods") }

// GetPodVolumeDir is where a volume's plugin sets it up: the directory the harness gave for
// the volume (docs/exec-protocol.md "Request": volumes), else the kubelet's layout.
func (h *volumeHost) GetPodVolumeDir(podUID types.UID, pluginName, volumeName string) string {
	if d, ok := h.dirs[volumeName]; ok {
		return d
	}
	return filepath.Join(h.root, "pods", string(podUID), "volumes", pluginName, volumeName)
}

func (h *volumeHost) GetPodPluginDir(podUID types.UID, pluginName string) string {
	return filepath.Join(h.root, "pods", string(podUID), "plugins", pluginName)
}

func (h *volumeHost) GetPodVolumeDeviceDir(podUID types.UID, pluginName string) string {
	return filepath.Join(h.root, "pods", string(podUID), "volumeDevices", pluginName)
}

func (h *volumeHost) GetKubeClient() clientset.Interface { return h.client }

// NewWrapperMounter is the kubelet's: the wrapped volume is named "wrapped_NAME" and gets its
// plugin's mounter (secret, configMap, downwardAPI and projected wrap an emptyDir).
func (h *volumeHost) NewWrapperMounter(volName string, spec volume.Spec, pod *corev1.Pod) (volume.Mounter, error) {
	if spec.Volume != nil {
		spec.Volume.Name = "wrapped_" + volName
	}
	plugin, err := h.pluginMgr.FindPluginBySpec(&spec)
	if err != nil {
		return nil, err
	}
	return plugin.NewMounter(&spec, pod)
}

// NewWrapperUnmounter is the kubelet's counterpart of NewWrapperMounter.
func (h *volumeHost) NewWrapperUnmounter(volName string, spec volume.Spec, podUID types.UID) (volume.Unmounter, error) {
	if spec.Volume != nil {
		spec.Volume.Name = "wrapped_" + volName
	}
	plugin, err := h.pluginMgr.FindPluginBySpec(&spec)
	if err != nil {
		return nil, err
	}
	return plugin.NewUnmounter(spec.Name(), podUID)
}

func (h *volumeHost) GetMounter() mount.Interface { return h.mounter }

func (h *volumeHost) GetNodeAllocatable() (corev1.ResourceList, error) { return h.allocatable, nil }

// GetSecretFunc and GetConfigMapFunc read the fake API server as a kubelet's default (Watch)
// secret and configMap managers read their caches: an absent object is the NotFound of v1.37
// pkg/kubelet/util/manager watch_based_manager.go objectCache.Get, whose resource is singular
// (secret_manager.go corev1.Resource("secret"), configmap_manager.go "configmap"), so a real
// node's text is `secret "x" not found`, not the client's `secrets "x" not found`.
func (h *volumeHost) GetSecretFunc() func(namespace, name string) (*corev1.Secret, error) {
	return func(namespace, name string) (*corev1.Secret, error) {
		s, err := h.client.CoreV1().Secrets(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, apierrors.NewNotFound(corev1.Resource("secret"), name)
		}
		return s, err
	}
}

func (h *volumeHost) GetConfigMapFunc() func(namespace, name string) (*corev1.ConfigMap, error) {
	return func(namespace, name string) (*corev1.ConfigMap, error) {
		c, err := h.client.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, apierrors.NewNotFound(corev1.Resource("configmap"), name)
		}
		return c, err
	}
}

// GetServiceAccountTokenFunc issues the reference node's fixed fake token (no API server signs
// one here) for every request, so that v1.37 projected.go collectData writes the file with its
// own mode rule (0600 when mounterArgs.FsUser or FsGroup is set, else defaultMode).
func (h *volumeHost) GetServiceAccountTokenFunc() func(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return func(_, _ string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		out := tr.DeepCopy()
		out.Status.Token = fakeServiceAccountToken
		return out, nil
	}
}

func (h *volumeHost) DeleteServiceAccountTokenFunc() func(podUID types.UID) {
	return func(types.UID) {}
}

func (h *volumeHost) GetNodeLabels() (map[string]string, error) {
	return map[string]string{corev1.LabelHostname: nodeName}, nil
}

func (h *volumeHost) GetNodeName() types.NodeName { return nodeName }

// GetHostName is part of VolumeHost up to v1.35 (docs/releases.md "Drift"); later releases do
// not ask.
func (h *volumeHost) GetHostName() string { return nodeName }

func (h *volumeHost) GetAttachedVolumesFromNodeStatus() (map[corev1.UniqueVolumeName]string, error) {
	return map[corev1.UniqueVolumeName]string{}, nil
}

// GetEventRecorder returns nil like the upstream fake host: no plugin used here records events
// unless given a recorder in MounterArgs, and the harness gives none.
func (h *volumeHost) GetEventRecorder() record.EventRecorder { return nil }

func (h *volumeHost) GetSubpather() subpath.Interface { return h.subpather }

// KubeletVolumeHost.

func (h *volumeHost) SetKubeletError(error) {}

func (h *volumeHost) GetInformerFactory() informers.SharedInformerFactory { return nil }

func (h *volumeHost) CSIDriverLister() storagelistersv1.CSIDriverLister { return nil }

func (h *volumeHost) CSIDriversSynced() cache.InformerSynced { return nil }

func (h *volumeHost) WaitForCacheSync() error { return nil }

func (h *volumeHost) GetHostUtil() hostutil.HostUtils { return h.hostUtil }

// GetPodCertificateCredentialBundle gives every podCertificate projection the reference node's
// fixed key and chain (no signer issues one here).
func (h *volumeHost) GetPodCertificateCredentialBundle(context.Context, string, string, string, string, int) ([]byte, []byte, error) {
	return []byte(fakeCertificateKey), []byte(fakeCertificateChain), nil
}

// sourceObjects builds the secrets and configMaps the fake API server holds: exactly the Case's
// Sources ("secret/NAME", "configmap/NAME" -> data); an object the Case does not give is absent
// (docs/exec-protocol.md "Request": sources; docs/spec.md [atomicwriter.sources]).
func sourceObjects(pod *corev1.Pod, sources map[string]map[string]string) []runtime.Object {
	var objs []runtime.Object
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: pod.Namespace, Name: name}
	}
	for key, data := range sources {
		kind, name, _ := strings.Cut(key, "/")
		switch kind {
		case "secret":
			s := &corev1.Secret{ObjectMeta: meta(name), Data: map[string][]byte{}}
			for k, v := range data {
				s.Data[k] = []byte(v)
			}
			objs = append(objs, s)
		case "configmap":
			objs = append(objs, &corev1.ConfigMap{ObjectMeta: meta(name), Data: maps.Clone(data)})
		}
	}
	return objs
}

// nodeAllocatable is what the harness node reports: the machine's memory (it bounds a Memory
// emptyDir's tmpfs size when the volume gives no sizeLimit, v1.37 calculateEmptyDirMemorySize).
func nodeAllocatable(memTotal int64) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(memTotal, resource.BinarySI)}
}
