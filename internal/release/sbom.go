package release

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// The SBOM is SPDX 2.3 JSON (https://spdx.github.io/spdx-spec/v2.3/): one package for kubewin,
// one for the Go standard library (the toolchain version), and one per Go module linked into any
// of the release's binaries, with the version and go.sum hash (h1:) that the go command recorded
// in the binary (debug.BuildInfo); replaced modules are listed as their replacement. Module
// packages carry a purl (pkg:golang/<path>@<version>, https://github.com/package-url/purl-spec)
// so scanners can match them.

// SPDXDocument is the subset of an SPDX 2.3 document kubewin writes (and tests read back).
type SPDXDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      SPDXCreationInfo   `json:"creationInfo"`
	Packages          []SPDXPackage      `json:"packages"`
	Relationships     []SPDXRelationship `json:"relationships"`
}

type SPDXCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type SPDXPackage struct {
	Name             string            `json:"name"`
	SPDXID           string            `json:"SPDXID"`
	VersionInfo      string            `json:"versionInfo"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	Supplier         string            `json:"supplier,omitempty"`
	Comment          string            `json:"comment,omitempty"`
	ExternalRefs     []SPDXExternalRef `json:"externalRefs,omitempty"`
}

type SPDXExternalRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type SPDXRelationship struct {
	SPDXElementID      string `json:"spdxElementId"`
	RelationshipType   string `json:"relationshipType"`
	RelatedSPDXElement string `json:"relatedSpdxElement"`
}

// GoSumPrefix starts the comment of a module package; the go.sum hash follows.
const GoSumPrefix = "go.sum "

// SBOM builds the SPDX document for version and commit from the build info of every binary of
// the release (by target). A module listed at different versions in two binaries is an error:
// one release comes from one module graph.
func SBOM(version, commit string, created time.Time, infos map[Target]*debug.BuildInfo) ([]byte, error) {
	type mod struct{ version, sum string }
	mods := map[string]mod{}
	var goVersion, mainPath string
	targets := make([]Target, 0, len(infos))
	for t := range infos {
		targets = append(targets, t)
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].String() < targets[j].String() })
	for _, t := range targets {
		bi := infos[t]
		if goVersion == "" {
			goVersion, mainPath = bi.GoVersion, bi.Main.Path
		} else if bi.GoVersion != goVersion || bi.Main.Path != mainPath {
			return nil, fmt.Errorf("sbom: %s was built by %s of %s, others by %s of %s", t, bi.GoVersion, bi.Main.Path, goVersion, mainPath)
		}
		for _, d := range bi.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			got := mod{m.Version, m.Sum}
			if prev, ok := mods[m.Path]; ok && prev != got {
				return nil, fmt.Errorf("sbom: module %s is %s in %s but %s in another binary", m.Path, got.version, t, prev.version)
			}
			mods[m.Path] = got
		}
	}
	if mainPath == "" {
		return nil, fmt.Errorf("sbom: no build info")
	}
	paths := make([]string, 0, len(mods))
	for p := range mods {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	mainID := "SPDXRef-Package-kubewin"
	doc := SPDXDocument{
		SPDXVersion: "SPDX-2.3",
		DataLicense: "CC0-1.0",
		SPDXID:      "SPDXRef-DOCUMENT",
		Name:        "kubewin-" + version,
		// Unique per release content, as SPDX asks, and the same for the same inputs.
		DocumentNamespace: fmt.Sprintf("%s/spdx/%s-%s", Homepage, version, commit),
		CreationInfo: SPDXCreationInfo{
			Created:  created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: kubewin-release-" + version},
		},
		Packages: []SPDXPackage{{
			Name:             mainPath,
			SPDXID:           mainID,
			VersionInfo:      version,
			DownloadLocation: "git+" + Homepage + "@" + commit,
			Comment:          "commit " + commit,
			ExternalRefs:     []SPDXExternalRef{purl(mainPath, version)},
		}, {
			Name:             "stdlib",
			SPDXID:           "SPDXRef-Package-stdlib",
			VersionInfo:      goVersion,
			DownloadLocation: "NOASSERTION",
			Comment:          "the Go standard library and runtime of the toolchain that built the binaries",
			ExternalRefs:     []SPDXExternalRef{purl("stdlib", "v"+strings.TrimPrefix(goVersion, "go"))},
		}},
		Relationships: []SPDXRelationship{
			{"SPDXRef-DOCUMENT", "DESCRIBES", mainID},
			{mainID, "DEPENDS_ON", "SPDXRef-Package-stdlib"},
		},
	}
	for _, p := range paths {
		m := mods[p]
		id := spdxID(p, m.version)
		doc.Packages = append(doc.Packages, SPDXPackage{
			Name:             p,
			SPDXID:           id,
			VersionInfo:      m.version,
			DownloadLocation: "NOASSERTION",
			Comment:          GoSumPrefix + m.sum,
			ExternalRefs:     []SPDXExternalRef{purl(p, m.version)},
		})
		doc.Relationships = append(doc.Relationships, SPDXRelationship{mainID, "DEPENDS_ON", id})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("sbom: %w", err)
	}
	return append(b, '\n'), nil
}

func purl(path, version string) SPDXExternalRef {
	return SPDXExternalRef{ReferenceCategory: "PACKAGE-MANAGER", ReferenceType: "purl", ReferenceLocator: "pkg:golang/" + path + "@" + version}
}

// spdxID makes an SPDX identifier (letters, digits, '.', '-') unique for a module version:
// the readable part alone could collide (a/b-c and a-b/c), so a short hash follows it.
func spdxID(path, version string) string {
	readable := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '-'
	}, path)
	sum := sha256.Sum256([]byte(path + "@" + version))
	return fmt.Sprintf("SPDXRef-Package-%s-%x", readable, sum[:4])
}
