package upstream

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	pvutil "k8s.io/kubernetes/pkg/api/persistentvolume"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // registers core/v1 defaulting and conversion in legacyscheme
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	volumevalidation "k8s.io/kubernetes/pkg/volume/validation"

	"github.com/volperm/volperm/framework"
)

// Admit runs c's Pod (or PersistentVolume) through the real kube-apiserver v1.37 code with
// c.Gates.APIServer in force: defaulting, conversion to the internal type, field dropping
// (PrepareForCreate), validation (Validate), as pkg/registry/core/pod and persistentvolume do.
// It returns the answer and, when a pod was admitted, the admitted pod as v1 (what a kubelet
// receives). c must be complete (framework.Case.Complete). An error means the apiserver code
// could not run; a rejection is an Admission with Allowed false.
func Admit(c *framework.Case) (framework.Admission, *corev1.Pod, error) {
	if ok, why := apiServerSupport(c); !ok {
		return framework.Admission{}, nil, fmt.Errorf("case %q: %s", c.Name, why)
	}
	var (
		adm framework.Admission
		pod *corev1.Pod
	)
	err := withGates(c.Gates.APIServer, func() error {
		var err error
		switch {
		case c.PersistentVolume != nil:
			adm, err = admitPersistentVolume(c.PersistentVolume)
		case c.Pod != nil:
			adm, pod, err = admitPod(c.Pod, c.OldPod)
		default:
			return fmt.Errorf("case %q has neither a pod nor a persistentVolume", c.Name)
		}
		return err
	})
	if err != nil {
		return framework.Admission{}, nil, err
	}
	return adm, pod, nil
}

// APIServer is the apiserver half: the real v1.37 admission code.
type APIServer struct{}

func newAPIServer(opts framework.TargetOptions) (APIServer, error) {
	if opts.Arg != "" {
		return APIServer{}, fmt.Errorf("apiserver %q takes no argument (got %q)", Name, opts.Arg)
	}
	return APIServer{}, nil
}

// Info names the upstream apiserver.
func (APIServer) Info() framework.TargetInfo { return info() }

// SupportsAdmission reports whether upstream v1.37 has what c needs at admission.
func (APIServer) SupportsAdmission(c *framework.Case) (bool, string) { return apiServerSupport(c) }

// Admit is Admit as the apiserver half.
func (APIServer) Admit(c *framework.Case) (framework.Admitted, error) {
	adm, pod, err := Admit(c)
	return framework.Admitted{Admission: adm, Pod: pod}, err
}

// apiServerSupport reports whether the upstream apiserver can admit c.
func apiServerSupport(c *framework.Case) (bool, string) {
	if c.FlexVolumePolicy != nil {
		return false, "upstream v1.37 has no flexVolume driver allowlist (seed 004 is a proposal; it needs a ValidatingAdmissionPolicy)"
	}
	if len(c.PreservePermissions) > 0 || len(c.OldPreservePermissions) > 0 {
		return false, "upstream v1.37 has no preservePermissions (seed 002 is a proposal)"
	}
	return gateSupport(c.Gates.APIServer)
}

// admitPod is the pod REST create: decoding defaults the v1 object, the registry converts it,
// podStrategy.PrepareForCreate drops disabled fields, podStrategy.Validate validates.
// With an old pod it is the pod-template update of a workload: dropping keeps fields the old
// spec already uses (v1.37 pkg/api/pod dropDisabledFields), validation options come from both.
func admitPod(in, oldIn *corev1.Pod) (framework.Admission, *corev1.Pod, error) {
	pod, err := toInternalPod(in)
	if err != nil {
		return framework.Admission{}, nil, err
	}
	var old *api.Pod
	if oldIn != nil {
		if old, err = toInternalPod(oldIn); err != nil {
			return framework.Admission{}, nil, err
		}
	}
	before := pod.DeepCopy()

	// v1.37 pkg/registry/core/pod/strategy.go PrepareForCreate -> podutil.DropDisabledPodFields.
	podutil.DropDisabledPodFields(pod, old)
	drops, err := dropped(before, pod)
	if err != nil {
		return framework.Admission{}, nil, err
	}
	adm := framework.Admission{Dropped: drops}

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
		return framework.Admission{}, nil, fmt.Errorf("convert admitted pod to v1: %w", err)
	}
	return adm, out, nil
}

// admitPersistentVolume is the persistentvolume REST create (v1.37
// pkg/registry/core/persistentvolume/strategy.go PrepareForCreate and Validate).
func admitPersistentVolume(in *corev1.PersistentVolume) (framework.Admission, error) {
	v1pv := in.DeepCopy()
	legacyscheme.Scheme.Default(v1pv)
	pv := &api.PersistentVolume{}
	if err := legacyscheme.Scheme.Convert(v1pv, pv, nil); err != nil {
		return framework.Admission{}, fmt.Errorf("convert persistentVolume to the internal type: %w", err)
	}
	pvutil.DropDisabledSpecFields(&pv.Spec, nil)
	errs := corevalidation.ValidatePersistentVolume(pv, corevalidation.ValidationOptionsForPersistentVolume(pv, nil))
	errs = append(errs, volumevalidation.ValidatePersistentVolume(pv)...)
	adm := framework.Admission{Errors: errorTexts(errs)}
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
// after it (framework.DroppedFields).
func dropped(before, after *api.Pod) ([]string, error) {
	var b, a corev1.Pod
	if err := legacyscheme.Scheme.Convert(before, &b, nil); err != nil {
		return nil, fmt.Errorf("convert pod to v1: %w", err)
	}
	if err := legacyscheme.Scheme.Convert(after, &a, nil); err != nil {
		return nil, fmt.Errorf("convert pod to v1: %w", err)
	}
	return framework.DroppedFields(b.Spec.Volumes, a.Spec.Volumes)
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
