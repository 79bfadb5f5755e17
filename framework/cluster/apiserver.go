package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volperm/volperm/framework"
	"github.com/volperm/volperm/framework/execproto"
	"github.com/volperm/volperm/framework/nodecontrol"
)

// apiserverHalf is the cluster's apiserver as the admission half of the target's pair
// (framework.APIServer, docs/spec.md step 1): each case is admitted once, by a server-side
// dry-run create in a namespace of the half's own, on the apiserver of the case's gates when
// the target reconfigures them (endpoint.go), under its flexVolume allowlist's binding. The
// answer is what the apiserver would store (defaulted, disabled fields dropped) or its
// rejection; the node half creates the probe pods from the stored pod.
type apiserverHalf struct {
	t *Target

	// mu guards what admissions share: the namespace, the bindings and the names are made
	// once; the dry-runs themselves run concurrently (Admit).
	mu sync.Mutex
	ns string
	n  int // objects admitted so far: names case-N and volperm-<ns>-N
	// bindings are the allowlists bound, by their parameters; made the policy bindings to
	// delete at Close (canaries too), in the order they were sent.
	bindings map[string]*binding
	made     []string
	// created counts the allowlists' bindings the apiserver has stored (binding.seq); shown is,
	// per endpoint, the highest seq a canary showed in effect there; canaries the canary in
	// flight per endpoint; nbound and ncanary name the next binding and canary.
	created         int
	shown           map[string]int
	canaries        map[string]*canary
	nbound, ncanary int
	// policy is the allowlist policy's name, once installed.
	policy string
	// serving are the endpoints that serve each apiserver gate setting (Reconfigure);
	// unserved why a setting has none.
	serving  map[string]string
	unserved map[string]error
	// admitted are the answers given, by the case as admitted: the targets of a Spread share
	// the half (every node's pods are written by the one apiserver), so a case asked about on
	// one node and observed on another is admitted once.
	admitted map[string]framework.Admitted
}

var (
	_ framework.APIServer = (*apiserverHalf)(nil)
	_ framework.OfRelease = (*apiserverHalf)(nil)
)

// Info names the cluster.
func (h *apiserverHalf) Info() framework.TargetInfo { return h.t.Info() }

// Release is the apiserver's minor release: a case of another cell is not run.
func (h *apiserverHalf) Release() string { return framework.MinorRelease(h.t.version) }

// SupportsAdmission says whether the cluster's apiserver runs with (or, reconfiguring, can be
// given) c's gates, whether the cluster is c's cell, and whether c is something a v1 apiserver
// admits as the target sends it (Runnable's checks of the object).
func (h *apiserverHalf) SupportsAdmission(c *framework.Case) (bool, string) {
	t := h.t
	if r := t.gatesGap(c, true); r != "" {
		return false, r
	}
	// One message names both components: the cell is the cluster's.
	if r := ReleasesMismatch(c, t.version, t.kubeletVersion); r != "" {
		return false, r
	}
	return admissible(c)
}

// Admit admits c on the cluster's apiserver (a dry-run create); an error is the apiserver
// failing (unreachable past its bound), a rejection an Admission not allowed. Admissions run
// concurrently (framework.APIServer): what they share (the namespace, the endpoint of the case's
// gates, its name) is made under h.mu, the allowlist's binding by bind, the dry-run outside both.
func (h *apiserverHalf) Admit(ctx context.Context, c *framework.Case) (framework.Admitted, error) {
	if c.Pod == nil && c.PersistentVolume == nil {
		return framework.Admitted{Admission: framework.Admission{Allowed: true}}, nil
	}
	key, err := json.Marshal(c)
	if err != nil {
		return framework.Admitted{}, fmt.Errorf("admission: %w", err)
	}
	h.mu.Lock()
	if a, ok := h.admitted[string(key)]; ok {
		h.mu.Unlock()
		return copyAdmitted(a), nil
	}
	ctx, req, err := h.prepare(ctx, c)
	h.mu.Unlock()
	if err != nil {
		return framework.Admitted{}, err
	}
	if c.FlexVolumePolicy != nil {
		if req.label, err = h.bind(ctx, req.ep, req.ns, c.FlexVolumePolicy); err != nil {
			return framework.Admitted{}, fmt.Errorf("admission: %w", err)
		}
	}
	var a framework.Admitted
	if c.Pod == nil {
		a, err = h.admitVolume(ctx, c, req)
	} else {
		a, err = h.admitPod(ctx, c, req)
	}
	if err != nil {
		return a, err
	}
	h.mu.Lock()
	if h.admitted == nil {
		h.admitted = map[string]framework.Admitted{}
	}
	h.admitted[string(key)] = a
	h.mu.Unlock()
	return copyAdmitted(a), nil
}

// copyAdmitted is a with a pod of its own (the node half renames the pod's sources).
func copyAdmitted(a framework.Admitted) framework.Admitted {
	a.Pod = a.Pod.DeepCopy()
	return a
}

// admitRequest is where and as what one case's dry-run is sent: the apiserver ("" = the
// kubeconfig's), the half's namespace, the binding label of its allowlist ("" = none) and its
// number (names case-N, volperm-<ns>-N).
type admitRequest struct {
	ep, ns, label string
	n             int
}

// prepare makes what c's dry-run needs but its allowlist's binding (h.mu held): the apiserver of
// its gates (Reconfigure: ctx then sends there), the namespace, the allowlist policy, a number
// of its own.
func (h *apiserverHalf) prepare(ctx context.Context, c *framework.Case) (context.Context, admitRequest, error) {
	ep := "" // the one the clients talk to
	if h.t.opts.Reconfigure {
		var err error
		if ep, err = h.endpoint(ctx, h.t.fullGates(c.Gates).APIServer); err != nil {
			return ctx, admitRequest{}, fmt.Errorf("admission: %w", err)
		}
		ctx = withEndpoint(ctx, ep)
	}
	ns, err := h.namespace(ctx)
	if err != nil {
		return ctx, admitRequest{}, fmt.Errorf("admission: %w", err)
	}
	req := admitRequest{ep: ep, ns: ns, n: h.n}
	if c.FlexVolumePolicy != nil && h.policy == "" {
		if h.policy, err = h.t.installPolicy(ctx); err != nil {
			return ctx, admitRequest{}, fmt.Errorf("admission: %w", err)
		}
	}
	h.n++
	return ctx, req, nil
}

// endpoint is the apiserver serving gates (node control's APIServerOf, once per setting).
func (h *apiserverHalf) endpoint(ctx context.Context, gates map[string]bool) (string, error) {
	key := nodecontrol.CellKey(framework.Gates{APIServer: gates})
	if ep, ok := h.serving[key]; ok {
		return ep, nil
	}
	if err := h.unserved[key]; err != nil {
		return "", err // the other cases of those gates do not wait again
	}
	ep, err := h.t.ctl.APIServerOf(ctx, gates)
	if err != nil {
		if ctx.Err() == nil {
			if h.unserved == nil {
				h.unserved = map[string]error{}
			}
			h.unserved[key] = err
		}
		return "", err
	}
	if h.serving == nil {
		h.serving = map[string]string{}
	}
	h.serving[key] = ep
	return ep, nil
}

// namespace is the half's namespace, created by the first admission that needs one.
func (h *apiserverHalf) namespace(ctx context.Context) (string, error) {
	if h.ns != "" {
		return h.ns, nil
	}
	ns, err := h.t.createNamespace(ctx, false)
	if err != nil {
		if ns != "" {
			h.t.deleteNamespace(ns)
		}
		return "", err
	}
	h.ns = ns
	return ns, nil
}

// admitVolume admits a case's PersistentVolume.
func (h *apiserverHalf) admitVolume(ctx context.Context, c *framework.Case, req admitRequest) (framework.Admitted, error) {
	pv := c.PersistentVolume.DeepCopy()
	pv.Name = fmt.Sprintf("volperm-%s-%d", strings.TrimPrefix(req.ns, framework.Namespace+"-"), req.n)
	withLabel(&pv.ObjectMeta, req.label)
	err := h.t.call(ctx, func(ctx context.Context) error {
		_, err := h.t.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	a, err := admission(err)
	return framework.Admitted{Admission: a}, err
}

// admitPod admits a case's pod as the node half will run it: the probe image in every
// container (a container of the volumes' mounts when the case has none), no service-account
// token volume added.
func (h *apiserverHalf) admitPod(ctx context.Context, c *framework.Case, req admitRequest) (framework.Admitted, error) {
	t := h.t
	pod := c.Pod.DeepCopy()
	pod.Name = fmt.Sprintf("case-%d", req.n)
	pod.Namespace = req.ns
	pod.UID = ""
	withLabel(&pod.ObjectMeta, req.label)
	no := false
	pod.Spec.AutomountServiceAccountToken = &no // no token volume is added to the case's volumes
	if len(pod.Spec.Containers) == 0 {
		ctr := corev1.Container{Name: "probe"}
		for _, v := range pod.Spec.Volumes {
			ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: "/volumes/" + v.Name})
		}
		pod.Spec.Containers = []corev1.Container{ctr}
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Image = t.opts.ProbeImage
		pod.Spec.Containers[i].ImagePullPolicy = corev1.PullNever
	}
	var stored *corev1.Pod
	var warned *warningCollector
	// The case's fieldValidation ("" = the apiserver's default, Warn, as client-go sends);
	// docs/spec.md [releases.apiserver-unknown-field].
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: c.FieldValidation}
	err := t.call(ctx, func(ctx context.Context) (err error) {
		ctx, warned = withWarnings(ctx) // the last attempt's
		stored, err = t.admitClient.CoreV1().Pods(req.ns).Create(ctx, pod, opts)
		return err
	})
	a, err := admission(err)
	if err != nil || !a.Allowed {
		return framework.Admitted{Admission: a}, err
	}
	warnings, unknown := warned.unknownFields()
	a.Warnings = warnings
	// v1.37 pkg/api/pod/util.go dropDisabledFields: the fields the gate-off apiserver cleared;
	// a field the apiserver's release does not know is not kept either, but it was not dropped:
	// it is an unknown field, warned about.
	dropped, err := execproto.DroppedFields(&pod.Spec, &stored.Spec)
	if err != nil {
		return framework.Admitted{}, fmt.Errorf("admission: %w", err)
	}
	for _, d := range dropped {
		if !slices.Contains(unknown, d) {
			a.Dropped = append(a.Dropped, d)
		}
	}
	return framework.Admitted{Admission: a, Pod: stored}, nil
}

// withLabel selects the binding of the case's allowlist ("" = it has none).
func withLabel(m *metav1.ObjectMeta, label string) {
	if label == "" {
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[PolicyLabel] = label
}

// admission is the dry-run's answer: allowed, or the rejection's texts; an error that is not a
// rejection (the apiserver unreachable) is the target's failure for the case.
func admission(err error) (framework.Admission, error) {
	if err == nil {
		return framework.Admission{Allowed: true}, nil
	}
	var down *APIServerDownError
	// A rejection is Invalid (validation), Forbidden (admission) or, for a body the apiserver's
	// release cannot decode strictly, BadRequest (k8s.io/apiserver handlers/create.go
	// transformDecodeError: "... strict decoding error: unknown field ...").
	if errors.As(err, &down) || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) && !strictDecodingError(err) {
		return framework.Admission{}, fmt.Errorf("admission: %w", err)
	}
	a := framework.Admission{Errors: admissionErrors(err)}
	if errs := policyErrors(err.Error()); errs != nil {
		a.Errors = errs
	}
	return a, nil
}

// strictDecodingError says whether err is the apiserver's refusal of a body with a field its
// release does not know, under fieldValidation Strict.
func strictDecodingError(err error) bool {
	return apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "strict decoding error")
}

// binding is one allowlist's binding (its parameters' key in the half's namespace), made by the
// first admission that needs it; the others wait for done. seq orders it among the bindings by
// when the apiserver had stored it.
type binding struct {
	key  string
	done chan struct{}
	err  error
	seq  int
}

// canary is a canary binding on one endpoint: once it is in effect there, so is every binding
// of seq <= covers.
type canary struct {
	covers int
	done   chan struct{}
	err    error
}

// bind gives allowlist p its parameters and binding, selected by PolicyLabel (once per
// allowlist: a second case of the same allowlist shares it), and waits until it is in effect
// on apiserver ep (the one ctx sends to): a binding takes effect when that apiserver's policy
// informer has seen it. It returns the PolicyLabel value of p's binding. Admissions of
// different allowlists bind at once (h.mu is held only to look up and record), so a batch's
// bindings are shown in effect by one or two canaries, not one after each.
func (h *apiserverHalf) bind(ctx context.Context, ep, ns string, p *framework.FlexVolumePolicy) (string, error) {
	raw, _ := json.Marshal(policyParams(p))
	h.mu.Lock()
	b, ok := h.bindings[string(raw)]
	if !ok {
		b = &binding{key: fmt.Sprintf("p%d", h.nbound), done: make(chan struct{})}
		h.nbound++
		if h.bindings == nil {
			h.bindings = map[string]*binding{}
		}
		h.bindings[string(raw)] = b
	}
	policy := h.policy
	h.mu.Unlock()
	if !ok {
		b.err = h.t.bindPolicy(ctx, policy, ns, b.key, policyParams(p), h.record)
		h.mu.Lock()
		if b.err != nil {
			delete(h.bindings, string(raw)) // the next case of the allowlist tries again
		} else {
			h.created++
			b.seq = h.created
		}
		h.mu.Unlock()
		close(b.done)
	} else {
		select {
		case <-b.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if b.err != nil {
		return "", b.err
	}
	return ns + "-" + b.key, h.inEffect(ctx, ep, ns, b.seq)
}

// record adds a policy binding's name to those Close deletes.
func (h *apiserverHalf) record(name string) {
	h.mu.Lock()
	h.made = append(h.made, name)
	h.mu.Unlock()
}

// inEffect waits until the binding of seq is in effect on apiserver ep: a canary binding made
// after it allows no volume type, and once an emptyDir pod under the canary is denied there,
// that apiserver has seen every binding stored before the canary was sent (an informer sees
// objects in the order they were written). One canary per endpoint is in flight; an admission
// whose binding it does not cover waits for it, then sends the next.
func (h *apiserverHalf) inEffect(ctx context.Context, ep, ns string, seq int) error {
	for {
		h.mu.Lock()
		if h.shown[ep] >= seq {
			h.mu.Unlock()
			return nil
		}
		w := h.canaries[ep]
		if w == nil {
			w = &canary{covers: h.created, done: make(chan struct{})}
			if h.canaries == nil {
				h.canaries = map[string]*canary{}
			}
			h.canaries[ep] = w
			key := fmt.Sprintf("canary%d", h.ncanary)
			h.ncanary++
			policy := h.policy
			h.mu.Unlock()
			w.err = h.t.bindPolicy(ctx, policy, ns, key, policyParams(&framework.FlexVolumePolicy{AllowedVolumeTypes: []string{"none"}}), h.record)
			if w.err == nil {
				w.err = h.t.waitDenied(ctx, ns, ns+"-"+key)
			}
			h.mu.Lock()
			if w.err == nil {
				if h.shown == nil {
					h.shown = map[string]int{}
				}
				h.shown[ep] = max(h.shown[ep], w.covers)
			}
			delete(h.canaries, ep)
			h.mu.Unlock()
			close(w.done)
			if w.err != nil {
				return w.err
			}
			continue
		}
		h.mu.Unlock()
		select {
		case <-w.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if w.err != nil && w.covers >= seq {
			return w.err
		}
	}
}

// Close deletes the half's policy bindings and its namespace (Cleanup deletes what fails).
func (h *apiserverHalf) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.t.unbindPolicies(h.made)
	h.made, h.bindings, h.shown = nil, nil, nil
	if h.ns != "" {
		h.t.deleteNamespace(h.ns)
		h.ns = ""
	}
	return nil
}

// waitDenied waits until a dry-run pod labelled label is denied by a policy on the endpoint of
// ctx.
func (t *Target) waitDenied(ctx context.Context, ns, label string) error {
	canary := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "canary", Namespace: ns, Labels: map[string]string{PolicyLabel: label}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: t.opts.ProbeImage}},
			Volumes:    []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	return waitFor(ctx, 60*time.Second, 250*time.Millisecond, "policy bindings in effect", func() (bool, error) {
		err := t.call(ctx, func(ctx context.Context) error {
			_, err := t.client.CoreV1().Pods(ns).Create(ctx, canary, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
		var down *APIServerDownError
		if errors.As(err, &down) {
			return false, err
		}
		// Denied by the policy, not forbidden by a restarting apiserver's authorizer.
		return apierrors.IsForbidden(err) && policyErrors(err.Error()) != nil, nil
	})
}

// bindPolicy creates the parameters (ConfigMap key in ns) and the binding of the allowlist
// policy selected by PolicyLabel=<ns>-<key>; the binding's name is given to made as soon as it
// may exist.
func (t *Target) bindPolicy(ctx context.Context, policy, ns, key string, data map[string]string, made func(string)) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: ns, Labels: ownedLabels()}, Data: data}
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("policy parameters %s: %w", key, err)
	}
	deny := admissionv1.DenyAction
	b := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + key, Labels: ownedLabels()},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			ParamRef:          &admissionv1.ParamRef{Name: key, Namespace: ns, ParameterNotFoundAction: &deny},
			MatchResources: &admissionv1.MatchResources{ObjectSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{PolicyLabel: ns + "-" + key}}},
		},
	}
	made(b.Name)
	if err := t.create(ctx, func(ctx context.Context) error {
		_, err := t.client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("policy binding %s: %w", b.Name, err)
	}
	return nil
}
