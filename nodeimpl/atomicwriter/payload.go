package atomicwriter

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/volperm/volperm/nodeimpl/mutant"
)

// Payload builds the files of a secret, configMap, downwardAPI or projected volume (v1.37
// secret.MakePayload, configmap.MakePayload, downwardapi.CollectData, projected collectData).
// sources maps "secret/NAME" and "configmap/NAME" to the object's data; an object missing there
// is absent (the Case's contract): upstream's NotFound, optional and missing-key rules apply with
// their texts. A serviceAccountToken projection gets FakeServiceAccountToken, a clusterTrustBundle
// FakeTrustAnchors, a podCertificate FakeCertificateKey and FakeCertificateChain: the reference
// node has no API server to issue them; their files are owned by the pod's FsUser (FsUserFrom).
//
// userFields is the kubelet's AtomicWriteVolumeUserFields gate (KEP-5936): on, each file's
// FsUser is its item's `user`, else the volume's `defaultUser` (docs/spec.md [atomicwriter.owner],
// [atomicwriter.token-owner]); off, no file has an owner, whatever the pod says.
func Payload(pod *corev1.Pod, vol *corev1.Volume, sources map[string]map[string]string, userFields bool) (map[string]FileProjection, error) {
	switch {
	case vol.Secret != nil:
		s := vol.Secret
		data, err := object(sources, "secret", s.SecretName, isTrue(s.Optional))
		if err != nil {
			return nil, err
		}
		return secretPayload(s.Items, data, s.DefaultMode, owners{userFields, s.DefaultUser}, isTrue(s.Optional))
	case vol.ConfigMap != nil:
		c := vol.ConfigMap
		data, err := object(sources, "configmap", c.Name, isTrue(c.Optional))
		if err != nil {
			return nil, err
		}
		return configMapPayload(c.Items, data, c.DefaultMode, owners{userFields, c.DefaultUser}, isTrue(c.Optional))
	case vol.DownwardAPI != nil:
		d := vol.DownwardAPI
		return collectDownwardAPI(d.Items, pod, d.DefaultMode, owners{userFields, d.DefaultUser})
	case vol.Projected != nil:
		return collectProjected(vol.Projected, pod, sources, userFields)
	}
	return nil, fmt.Errorf("volume %q is not a secret, configMap, downwardAPI or projected volume", vol.Name)
}

func isTrue(b *bool) bool { return b != nil && *b }

// object is the data of sources[kind/name] as a kubelet's secret or configMap manager finds it:
// an object the Case does not give is absent, which fails the volume with v1.37's NotFound text
// (pkg/kubelet/util/manager watch_based_manager.go objectCache.Get: `secret "x" not found`)
// unless the reference is optional (then it is an empty object: secret.go / configmap.go SetUpAt,
// projected.go collectData).
func object(sources map[string]map[string]string, kind, name string, optional bool) (map[string]string, error) {
	data, found := sources[kind+"/"+name]
	if !found && !optional {
		return nil, fmt.Errorf("%s %q not found", kind, name)
	}
	return data, nil
}

// errNoDefaultMode is the text of every v1.37 payload builder when defaultMode is nil.
var errNoDefaultMode = errors.New("no defaultMode used, not even the default value for it")

// owners is what a payload builder needs to resolve file owners (KEP-5936): the kubelet's
// AtomicWriteVolumeUserFields gate and the volume's defaultUser.
type owners struct {
	gate        bool
	defaultUser *int64
}

// of is v1.37 atomic_writer.go ResolvesFsUser: the item's user, else defaultUser; nil when the
// gate is off. The result is a copy: the payload never aliases the pod.
func (o owners) of(itemUser *int64) *int64 {
	if !o.gate {
		return nil
	}
	u := itemUser
	if u != nil && *u == 0 && mutant.On(mutant.BlindUserZeroUnset) {
		u = nil
	}
	if u == nil {
		u = o.defaultUser
	} else if o.defaultUser != nil && mutant.On(mutant.AtomicUserDefaultWins) {
		u = o.defaultUser
	}
	if u == nil {
		return nil
	}
	v := *u
	return &v
}

// secretPayload is v1.37 secret.MakePayload.
func secretPayload(items []corev1.KeyToPath, data map[string]string, defaultMode *int32, own owners, optional bool) (map[string]FileProjection, error) {
	return keyedPayload(items, data, defaultMode, own, optional, "references non-existent secret key: %s")
}

// configMapPayload is v1.37 configmap.MakePayload (the Case carries no binaryData).
func configMapPayload(items []corev1.KeyToPath, data map[string]string, defaultMode *int32, own owners, optional bool) (map[string]FileProjection, error) {
	return keyedPayload(items, data, defaultMode, own, optional, "configmap references non-existent config key: %s")
}

// keyedPayload is what secret.MakePayload and configmap.MakePayload share: every key with
// defaultMode (and, gate on, defaultUser), or the listed items with their own modes and owners; a
// missing key fails with missingKey unless the object is optional (then it is skipped).
func keyedPayload(items []corev1.KeyToPath, data map[string]string, defaultMode *int32, own owners, optional bool, missingKey string) (map[string]FileProjection, error) {
	if defaultMode == nil {
		return nil, errNoDefaultMode
	}
	payload := make(map[string]FileProjection, len(data))
	if len(items) == 0 {
		for name, content := range data {
			// v1.37 MakePayload without items: FsUser = defaultUser when the gate is on.
			fsUser := own.of(nil)
			if mutant.On(mutant.BlindUserDefaultIgnoredWithoutItems) {
				fsUser = nil
			}
			payload[name] = FileProjection{Data: []byte(content), Mode: *defaultMode, FsUser: fsUser}
		}
		return payload, nil
	}
	for _, ktp := range items {
		content, ok := data[ktp.Key]
		if !ok {
			if optional && !mutant.On(mutant.BlindAtomicOptionalMissingKeyFails) {
				continue
			}
			return nil, fmt.Errorf(missingKey, ktp.Key)
		}
		// v1.37 MakePayload with items: FsUser = ResolvesFsUser(defaultUser, ktp.User).
		itemOwners := own
		if mutant.On(mutant.BlindUserDefaultIgnoredWithItems) {
			itemOwners.defaultUser = nil
		}
		payload[ktp.Path] = FileProjection{Data: []byte(content), Mode: itemMode(ktp.Mode, defaultMode), FsUser: itemOwners.of(ktp.User)}
	}
	return payload, nil
}

// itemMode is the item's mode if set, else the volume's defaultMode (v1.37 MakePayload).
func itemMode(mode, defaultMode *int32) int32 {
	if mode != nil && !mutant.On(mutant.AtomicItemModeIgnored) && !(*mode == 0 && mutant.On(mutant.BlindAtomicItemModeZeroUnset)) {
		return *mode
	}
	return *defaultMode
}

// collectDownwardAPI is v1.37 downwardapi.CollectData: every item is in the payload (empty
// when its value failed), and all failures are returned together.
func collectDownwardAPI(items []corev1.DownwardAPIVolumeFile, pod *corev1.Pod, defaultMode *int32, own owners) (map[string]FileProjection, error) {
	if defaultMode == nil {
		return nil, errNoDefaultMode
	}
	var errs []error
	data := make(map[string]FileProjection, len(items))
	for _, item := range items {
		// v1.37 CollectData: FsUser = ResolvesFsUser(defaultUser, fileInfo.User).
		fp := FileProjection{Mode: itemMode(item.Mode, defaultMode), FsUser: own.of(item.User)}
		switch {
		case item.FieldRef != nil:
			if v, err := fieldPathValue(pod, item.FieldRef.FieldPath); err != nil {
				errs = append(errs, err)
			} else {
				fp.Data = []byte(v)
			}
		case item.ResourceFieldRef != nil:
			if v, err := resourceValue(item.ResourceFieldRef, pod); err != nil {
				errs = append(errs, err)
			} else {
				fp.Data = []byte(v)
			}
		}
		data[filepath.Clean(item.Path)] = fp
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return nil, err
	}
	return data, nil
}

// collectProjected is v1.37 projectedVolumeMounter.collectData: sources in order, a later
// source overwriting an earlier one's path, every source's failure collected.
func collectProjected(p *corev1.ProjectedVolumeSource, pod *corev1.Pod, sources map[string]map[string]string, userFields bool) (map[string]FileProjection, error) {
	if p.DefaultMode == nil {
		return nil, errNoDefaultMode
	}
	// v1.37 collectData: every source gets the projected volume's defaultUser.
	own := owners{userFields, p.DefaultUser}
	var errs []error
	payload := map[string]FileProjection{}
	for _, src := range p.Sources {
		var part map[string]FileProjection
		var err error
		switch {
		case src.Secret != nil:
			var data map[string]string
			if data, err = object(sources, "secret", src.Secret.Name, isTrue(src.Secret.Optional)); err == nil {
				part, err = secretPayload(src.Secret.Items, data, p.DefaultMode, own, isTrue(src.Secret.Optional))
			}
		case src.ConfigMap != nil:
			var data map[string]string
			if data, err = object(sources, "configmap", src.ConfigMap.Name, isTrue(src.ConfigMap.Optional)); err == nil {
				part, err = configMapPayload(src.ConfigMap.Items, data, p.DefaultMode, own, isTrue(src.ConfigMap.Optional))
			}
		case src.DownwardAPI != nil:
			part, err = collectDownwardAPI(src.DownwardAPI.Items, pod, p.DefaultMode, own)
		case src.ServiceAccountToken != nil:
			part = credentialPayload(p, pod, own, src.ServiceAccountToken.User, map[string][]byte{src.ServiceAccountToken.Path: []byte(FakeServiceAccountToken)})
		case src.ClusterTrustBundle != nil:
			part = credentialPayload(p, pod, own, src.ClusterTrustBundle.User, map[string][]byte{src.ClusterTrustBundle.Path: []byte(FakeTrustAnchors)})
		case src.PodCertificate != nil:
			part = credentialPayload(p, pod, own, src.PodCertificate.User, podCertificateFiles(src.PodCertificate))
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for k, v := range part {
			payload[k] = v
		}
	}
	if err := utilerrors.NewAggregate(errs); err != nil {
		return nil, err
	}
	return payload, nil
}

// FakeServiceAccountToken is the token of every projected serviceAccountToken on the reference
// node, which has no API server to issue one (volperm's upstream target writes the same bytes):
// a fixed, well-formed but unsigned JWT (header {"alg":"none"}, payload {"sub":"volperm"}) that
// no API server accepts. Only the file's mode and owner are observed (docs/user-pain.md, issue 82573).
const FakeServiceAccountToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ2b2xwZXJtIn0."

// FakeTrustAnchors is every clusterTrustBundle projection's content on the reference node
// (volperm's upstream target returns the same bytes for any name or signer): it holds no
// certificate. Only the file's mode and owner are observed.
const FakeTrustAnchors = "volperm: fake trust anchors, no certificate"

// FakeCertificateKey and FakeCertificateChain are every podCertificate projection's private key
// and certificate chain on the reference node (and volperm's upstream target).
const (
	FakeCertificateKey   = "volperm: fake private key;"
	FakeCertificateChain = "volperm: fake certificate chain"
)

// podCertificateFiles is v1.37 projected.go collectData's podCertificate files: the credential
// bundle (key, then chain), the key and the chain, each at its path when the source gives one.
func podCertificateFiles(c *corev1.PodCertificateProjection) map[string][]byte {
	files := map[string][]byte{}
	if c.CredentialBundlePath != "" {
		files[c.CredentialBundlePath] = []byte(FakeCertificateKey + FakeCertificateChain)
	}
	if c.KeyPath != "" {
		files[c.KeyPath] = []byte(FakeCertificateKey)
	}
	if c.CertificateChainPath != "" {
		files[c.CertificateChainPath] = []byte(FakeCertificateChain)
	}
	return files
}

// credentialPayload is the serviceAccountToken, clusterTrustBundle and podCertificate cases of
// v1.37 projected.go collectData: every file's owner is resolveFsUser(mounterArgs, defaultUser,
// the source's user) and its mode defaultMode, or 0600 when it has an owner or
// mounterArgs.FsGroup is set (SetVolumeOwnership then makes it 0640).
func credentialPayload(p *corev1.ProjectedVolumeSource, pod *corev1.Pod, own owners, user *int64, files map[string][]byte) map[string]FileProjection {
	owner := resolveFsUser(FsUserFrom(pod), own, user)
	mode := *p.DefaultMode
	if sc := pod.Spec.SecurityContext; owner != nil || (sc != nil && sc.FSGroup != nil) {
		mode = 0600
	}
	out := map[string]FileProjection{}
	for name, data := range files {
		out[name] = FileProjection{Data: data, Mode: mode, FsUser: owner}
	}
	return out
}

// resolveFsUser is v1.37 projected.go resolveFsUser: mounterArgs.FsUser, then, with the
// AtomicWriteVolumeUserFields gate on, the volume's defaultUser and the source's user over it.
func resolveFsUser(fsUser *int64, own owners, user *int64) *int64 {
	if u := own.of(user); u != nil {
		return u
	}
	return fsUser
}

// FsUserFrom is v1.37 pkg/volume/util FsUserFrom (operation_generator.go passes it as
// mounterArgs.FsUser): the runAsUser every container of the pod runs as, init and ephemeral
// containers included, a container's own runAsUser over the pod's
// (securitycontext.DetermineEffectiveRunAsUser); nil when a container has none or two differ.
func FsUserFrom(pod *corev1.Pod) *int64 {
	var podUser *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		podUser = sc.RunAsUser
	}
	var all []*corev1.SecurityContext
	for i := range pod.Spec.InitContainers {
		all = append(all, pod.Spec.InitContainers[i].SecurityContext)
	}
	for i := range pod.Spec.Containers {
		all = append(all, pod.Spec.Containers[i].SecurityContext)
	}
	for i := range pod.Spec.EphemeralContainers {
		all = append(all, pod.Spec.EphemeralContainers[i].SecurityContext)
	}
	var fsUser *int64
	for _, sc := range all {
		u := podUser
		if sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if u == nil || (fsUser != nil && *fsUser != *u) {
			return nil
		}
		if fsUser == nil {
			v := *u
			fsUser = &v
		}
	}
	return fsUser
}

// fieldPathValue is v1.37 pkg/fieldpath ExtractFieldPathAsString for a pod, with its texts.
func fieldPathValue(pod *corev1.Pod, fieldPath string) (string, error) {
	if p, subscript, ok := splitMaybeSubscriptedPath(fieldPath); ok {
		switch p {
		case "metadata.annotations":
			if errs := validation.IsQualifiedName(strings.ToLower(subscript)); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Annotations[subscript], nil
		case "metadata.labels":
			if errs := validation.IsQualifiedName(subscript); len(errs) != 0 {
				return "", fmt.Errorf("invalid key subscript in %s: %s", fieldPath, strings.Join(errs, ";"))
			}
			return pod.Labels[subscript], nil
		default:
			return "", fmt.Errorf("fieldPath %q does not support subscript", fieldPath)
		}
	}
	switch fieldPath {
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	}
	return "", fmt.Errorf("unsupported fieldPath: %v", fieldPath)
}

// splitMaybeSubscriptedPath is v1.37 fieldpath.SplitMaybeSubscriptedPath:
// "metadata.labels['k']" -> ("metadata.labels", "k", true).
func splitMaybeSubscriptedPath(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return fieldPath, "", false
	}
	parts := strings.SplitN(strings.TrimSuffix(fieldPath, "']"), "['", 2)
	if len(parts) < 2 || parts[0] == "" {
		return fieldPath, "", false
	}
	return parts[0], parts[1], true
}

// formatMap is v1.37 fieldpath.FormatMap: sorted `key="quoted value"` lines.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, m[k])
	}
	return string(b)
}

// resourceValue is v1.37 ExtractResourceValueByContainerNameAndNodeAllocatable without the
// node: the reference node has no allocatable, so a missing limit reads as 0 where upstream
// would substitute the node's allocatable.
func resourceValue(fs *corev1.ResourceFieldSelector, pod *corev1.Pod) (string, error) {
	c, err := findContainer(pod, fs.ContainerName)
	if err != nil {
		return "", err
	}
	divisor := resource.MustParse("1")
	if !fs.Divisor.IsZero() {
		divisor = fs.Divisor
	}
	res := c.Resources
	switch fs.Resource {
	case "limits.cpu":
		return cpuString(res.Limits.Cpu(), divisor), nil
	case "limits.memory":
		return valueString(res.Limits.Memory(), divisor), nil
	case "limits.ephemeral-storage":
		return valueString(res.Limits.StorageEphemeral(), divisor), nil
	case "requests.cpu":
		return cpuString(res.Requests.Cpu(), divisor), nil
	case "requests.memory":
		return valueString(res.Requests.Memory(), divisor), nil
	case "requests.ephemeral-storage":
		return valueString(res.Requests.StorageEphemeral(), divisor), nil
	}
	// v1.37 ExtractContainerResourceValue: requests./limits.hugepages-<size>.
	for prefix, list := range map[string]corev1.ResourceList{"requests.": res.Requests, "limits.": res.Limits} {
		name := corev1.ResourceName(strings.TrimPrefix(fs.Resource, prefix))
		if strings.HasPrefix(fs.Resource, prefix) && strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			return valueString(list.Name(name, resource.BinarySI), divisor), nil
		}
	}
	return "", fmt.Errorf("unsupported container resource : %v", fs.Resource)
}

// findContainer is v1.37 findContainerInPod: containers, then init containers.
func findContainer(pod *corev1.Pod, name string) (*corev1.Container, error) {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], nil
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i], nil
		}
	}
	return nil, fmt.Errorf("container %s not found", name)
}

// cpuString is v1.37 convertResourceCPUToString: the ceiling in divisor units, in millis.
func cpuString(q *resource.Quantity, divisor resource.Quantity) string {
	return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10)
}

// valueString is v1.37 convertResourceMemoryToString (and its ephemeral-storage and
// hugepages twins): the ceiling in divisor units.
func valueString(q *resource.Quantity, divisor resource.Quantity) string {
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10)
}
