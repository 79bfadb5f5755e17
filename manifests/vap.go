package manifests

import _ "embed"

// FlexVolumeVAP is flexvolume-vap.yaml: the ValidatingAdmissionPolicy enforcing seed 004's
// flexVolume driver allowlist on a real apiserver, with ConfigMap parameters.
//
//go:embed flexvolume-vap.yaml
var FlexVolumeVAP []byte
