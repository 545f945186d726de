package release

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// PluginName is the krew plugin's name: installed, it runs as `kubectl kubewin …`.
const PluginName = "kubewin"

// The krew manifest's schema: sigs.k8s.io/krew pkg/index/types.go (v0.4.3), apiVersion
// krew.googlecontainertools.github.com/v1alpha2. Only the fields kubewin fills are mirrored.
type krewPlugin struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   krewMetadata `json:"metadata"`
	Spec       krewSpec     `json:"spec"`
}

type krewMetadata struct {
	Name string `json:"name"`
}

type krewSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description"`
	Platforms        []krewPlatform `json:"platforms"`
}

type krewPlatform struct {
	Selector krewSelector `json:"selector"`
	URI      string       `json:"uri"`
	Sha256   string       `json:"sha256"`
	Files    []krewFile   `json:"files"`
	Bin      string       `json:"bin"`
}

type krewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type krewFile struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Homepage is the project's home, written into the krew manifest and the image labels.
const Homepage = "https://github.com/kubewin/kubewin"

// KrewManifest renders the krew plugin manifest for version: one platform per target, each
// pointing at its archive under baseURL with the archive's SHA-256 (archiveSums by target, hex).
// krew matches a platform by the labels os and arch (GOOS/GOARCH values) and links bin as
// kubectl-kubewin.
func KrewManifest(version, baseURL string, targets []Target, archiveSums map[Target]string) ([]byte, error) {
	p := krewPlugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   krewMetadata{Name: PluginName},
		Spec: krewSpec{
			Version:          version,
			Homepage:         Homepage,
			ShortDescription: "Plan, join and diagnose Windows and Linux worker nodes",
			Description: "kubewin plans the network of Windows (and Linux) worker nodes joining an existing\n" +
				"cluster, renders their set-up, creates bootstrap tokens and node user-data, joins\n" +
				"nodes, checks their configuration and diagnoses their logs.\n",
		},
	}
	base := strings.TrimSuffix(baseURL, "/")
	for _, t := range targets {
		sum, ok := archiveSums[t]
		if !ok {
			return nil, fmt.Errorf("krew manifest: no archive checksum for %s", t)
		}
		p.Spec.Platforms = append(p.Spec.Platforms, krewPlatform{
			Selector: krewSelector{MatchLabels: map[string]string{"os": t.OS, "arch": t.Arch}},
			URI:      base + "/" + ArchiveName(version, t),
			Sha256:   sum,
			Files:    []krewFile{{From: ExeName(t), To: "."}},
			Bin:      ExeName(t),
		})
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("krew manifest: %w", err)
	}
	return b, nil
}
