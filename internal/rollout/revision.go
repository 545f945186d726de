package rollout

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/rollout/api"
)

// ParseRevision reads a revision file (`rollout start --to FILE`): YAML or JSON of
// api.Revision, strictly (an unknown or duplicated field is an error), validated.
func ParseRevision(data []byte) (*api.Revision, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, fmt.Errorf("revision: %w", err)
	}
	return api.DecodeRevision(string(j))
}
