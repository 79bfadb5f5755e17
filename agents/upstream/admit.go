package main

import (
	"errors"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	pvutil "k8s.io/kubernetes/pkg/api/persistentvolume"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers core/v1 defaulting and conversion in legacyscheme
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	volumevalidation "k8s.io/kubernetes/pkg/volume/validation"

	"github.com/volperm/volperm/framework/execproto"
)

// admit runs the request's Pod (or PersistentVolume) through the real kube-apiserver code with
// the request's apiserver gates in force: defaulting, conversion to the internal type, field
// dropping (PrepareForCreate), validation (Validate), as pkg/registry/core/pod and
// persistentvolume do. The answer carries, when a pod was admitted, the admitted pod as v1
// (what a kubelet receives). An error means the apiserver code could not run; a rejection is
// an answer with Allowed false. This apiserver has neither preservePermissions nor a flexVolume
// allowlist (seeds 002 and 004 are proposals): the volperm target "upstream" does not send
// cases that need them.
func admit(req *execproto.AdmitRequest, version string) (*execproto.AdmitResponse, error) {
	if req.ProtocolVersion != version {
		return nil, fmt.Errorf("admit request in protocol %q; this agent speaks %q here", req.ProtocolVersion, version)
	}
	var (
		adm admission
		pod *corev1.Pod
	)
	err := withGates(req.APIServerGates, func() error {
		var err error
		switch {
		case req.PersistentVolume != nil:
			adm, err = admitPersistentVolume(req.PersistentVolume)
		case req.Pod != nil:
			in, warnings, rejected, derr := decodePod(req)
			if derr != nil {
				return derr
			}
			if rejected != "" {
				adm = admission{Errors: []string{rejected}}
				return nil
			}
			adm, pod, err = admitPod(in, req.OldPod)
			adm.Warnings = warnings
		default:
			return errors.New("admit request has neither a pod nor a persistentVolume")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &execproto.AdmitResponse{ProtocolVersion: version, Allowed: adm.Allowed, Errors: adm.Errors,
		Dropped: adm.Dropped, Pod: pod, Warnings: adm.Warnings}, nil
}

// admission is the apiserver's answer: allowed or the validation errors, the fields dropped,
// and the warnings.
type admission struct {
	Allowed  bool
	Errors   []string
	Dropped  []string
	Warnings []string
}

// decodePod decodes the pod of a create request as the kube-apiserver's create handler does
// (k8s.io/apiserver pkg/endpoints/handlers/create.go): with the strict JSON serializer, so that a
// field this release's API lacks is a strict decoding error; with fieldValidation Warn (the
// default) the pod is admitted without it and each unknown field is a warning
// (addStrictDecodingWarnings), with Strict the request is refused with the handler's text
// (rest.go transformDecodeError). The answer's texts are those.
func decodePod(req *execproto.AdmitRequest) (pod *corev1.Pod, warnings []string, rejected string, err error) {
	if len(req.RawPod) == 0 {
		return req.Pod, nil, "", nil
	}
	s := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, legacyscheme.Scheme, legacyscheme.Scheme, kjson.SerializerOptions{Strict: true})
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	obj, _, err := s.Decode(req.RawPod, &gvk, &corev1.Pod{})
	if err != nil {
		strict, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, nil, "", fmt.Errorf("decode pod: %w", err)
		}
		if req.FieldValidation == execproto.FieldValidationStrict {
			return nil, nil, fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err), nil
		}
		for _, e := range strict.Errors() {
			warnings = append(warnings, e.Error())
		}
		sort.Strings(warnings)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, "", fmt.Errorf("decode pod: got %T", obj)
	}
	return pod, warnings, "", nil
}

// admitPod is the pod REST create: decoding defaults the v1 object, the registry converts it,
// podStrategy.PrepareForCreate drops disabled fields, podStrategy.Validate validates.
// With an old pod it is the pod-template update of a workload: dropping keeps fields the old
// spec already uses (v1.37 pkg/api/pod dropDisabledFields), validation options come from both.
func admitPod(in, oldIn *corev1.Pod) (admission, *corev1.Pod, error) {
	pod, err := toInternalPod(in)
	if err != nil {
		return admission{}, nil, err
	}
	var old *api.Pod
	if oldIn != nil {
		if old, err = toInternalPod(oldIn); err != nil {
			return admission{}, nil, err
		}
	}
	before := pod.DeepCopy()

	// v1.37 pkg/registry/core/pod/strategy.go PrepareForCreate -> podutil.DropDisabledPodFields.
	podutil.DropDisabledPodFields(pod, old)
	drops, err := dropped(before, pod)
	if err != nil {
		return admission{}, nil, err
	}
	adm := admission{Dropped: drops}

	// v1.37 pkg/registry/core/pod/strategy.go Validate.
	var oldSpec *api.PodSpec
	var oldMeta *metav1.ObjectMeta
	if old != nil {
		oldSpec, oldMeta = &old.Spec, &old.ObjectMeta
	}
	opts := podutil.GetValidationOptionsFromPodSpecAndMeta(&pod.Spec, oldSpec, &pod.ObjectMeta, oldMeta)
	opts.ResourceIsPod = true
	adm.Errors = errorTexts(corevalidation.ValidatePodCreate(pod, opts))
	adm.Allowed = len(adm.Errors) == 0
	if !adm.Allowed {
		return adm, nil, nil
	}
	out := &corev1.Pod{}
	if err := legacyscheme.Scheme.Convert(pod, out, nil); err != nil {
		return admission{}, nil, fmt.Errorf("convert admitted pod to v1: %w", err)
	}
	return adm, out, nil
}

// admitPersistentVolume is the persistentvolume REST create (v1.37
// pkg/registry/core/persistentvolume/strategy.go PrepareForCreate and Validate).
func admitPersistentVolume(in *corev1.PersistentVolume) (admission, error) {
	v1pv := in.DeepCopy()
	legacyscheme.Scheme.Default(v1pv)
	pv := &api.PersistentVolume{}
	if err := legacyscheme.Scheme.Convert(v1pv, pv, nil); err != nil {
		return admission{}, fmt.Errorf("convert persistentVolume to the internal type: %w", err)
	}
	pvutil.DropDisabledSpecFields(&pv.Spec, nil)
	errs := corevalidation.ValidatePersistentVolume(pv, corevalidation.ValidationOptionsForPersistentVolume(pv, nil))
	errs = append(errs, volumevalidation.ValidatePersistentVolume(pv)...)
	adm := admission{Errors: errorTexts(errs)}
	adm.Allowed = len(adm.Errors) == 0
	return adm, nil
}

// toInternalPod defaults a copy of p the way decoding does (v1.37 pkg/apis/core/v1
// SetObjectDefaults_Pod, registered in legacyscheme) and converts it to the internal type.
func toInternalPod(p *corev1.Pod) (*api.Pod, error) {
	v1pod := p.DeepCopy()
	legacyscheme.Scheme.Default(v1pod)
	pod := &api.Pod{}
	if err := legacyscheme.Scheme.Convert(v1pod, pod, nil); err != nil {
		return nil, fmt.Errorf("convert pod %s to the internal type: %w", p.Name, err)
	}
	return pod, nil
}

// dropped lists the volume fields PrepareForCreate cleared (v1.37 pkg/api/pod/util.go
// dropDisabledFields, whichever gate): the fields of the v1 volumes before it that are gone
// after it (execproto.DroppedFields).
func dropped(before, after *api.Pod) ([]string, error) {
	var b, a corev1.Pod
	if err := legacyscheme.Scheme.Convert(before, &b, nil); err != nil {
		return nil, fmt.Errorf("convert pod to v1: %w", err)
	}
	if err := legacyscheme.Scheme.Convert(after, &a, nil); err != nil {
		return nil, fmt.Errorf("convert pod to v1: %w", err)
	}
	return execproto.DroppedFields(&b.Spec, &a.Spec)
}

func errorTexts(errs field.ErrorList) []string {
	if len(errs) == 0 {
		return nil
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}
