package noderun

import (
	"errors"
	"fmt"
)

// EncodeManifest returns the bytes WriteManifest writes (deterministic, indented JSON), for
// callers that put the manifest in place together with other files (kubewin join).
func EncodeManifest(m *Manifest) ([]byte, error) {
	if errs := validate(m, "services.json", nil); len(errs) > 0 {
		return nil, fmt.Errorf("node services manifest: %w", errors.Join(errs...))
	}
	return marshalManifest(m)
}
