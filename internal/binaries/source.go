// Package binaries resolves the node binaries kubewin join installs — containerd, the kubelet,
// kube-proxy, kube-log-runner and the CNI plugins — from the projects' own release layouts,
// checks every download against the checksum its publisher put next to it, takes the programs
// out of the release archives, and writes them as a mirror: a directory of files and a
// SHA256SUMS listing each one, the form `kubewin join --binaries` has always read. Join reads
// the official layouts by building such a mirror in its data directory, so every install goes
// through the one checked path whichever source was named.
package binaries

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Default release hosts: where each project publishes.
const (
	// DefaultKubernetesURL serves <version>/bin/<os>/<arch>/<binary> with .sha256 and .sha512
	// beside each (kubernetes/release pkg/release/release.go: the bin/<platform>/<arch>
	// directory and WriteChecksums; https://kubernetes.io/releases/download/#binaries).
	DefaultKubernetesURL = "https://dl.k8s.io/release"
	// DefaultContainerdURL serves v<version>/containerd-<version>-<os>-<arch>.tar.gz and its
	// .sha256sum (the GitHub release of containerd/containerd; Makefile target release,
	// .github/workflows/release.yml).
	DefaultContainerdURL = "https://github.com/containerd/containerd/releases/download"
	// DefaultCNIURL serves v<version>/cni-plugins-<os>-<arch>-v<version>.tgz with .sha256 and
	// .sha512 (containernetworking/plugins .github/workflows/release.yaml).
	DefaultCNIURL = "https://github.com/containernetworking/plugins/releases/download"
)

// OfficialPrefix starts a --binaries value that names the official release layouts.
const OfficialPrefix = "official:"

// Official names a version of each component in its project's release layout. A version left
// empty leaves that component out (the mirror command may take fewer; join needs all three).
type Official struct {
	Kubernetes, Containerd, CNI string
	// The release hosts (the defaults above when empty): a company mirror that copies the
	// projects' layouts byte for byte is named here.
	KubernetesURL, ContainerdURL, CNIURL string
}

// versionRE is a release tag: vMAJOR.MINOR.PATCH with an optional pre-release ("-rc.1").
var versionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z]+(\.[0-9A-Za-z]+)*)?$`)

// normalizeVersion admits "1.2.3" and "v1.2.3" and returns "v1.2.3"; "" stays "".
func normalizeVersion(what, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !versionRE.MatchString(v) {
		return "", fmt.Errorf("%s version %q: expected a release version such as v1.2.3 (no \"latest\", no partial version)", what, strings.TrimPrefix(v, "v"))
	}
	return v, nil
}

func checkBaseURL(what, s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", what, s, err)
	}
	// The checksums come from the same host as the files they check: over plain http whoever
	// can change one can change both.
	if u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%s %q: expected an https:// base URL without query", what, s)
	}
	return strings.TrimSuffix(s, "/"), nil
}

// Normalize checks o and returns it with versions as "vX.Y.Z" and the default hosts filled in.
func (o Official) Normalize() (Official, error) {
	var err error
	for _, f := range []struct {
		what string
		v    *string
	}{{"kubernetes", &o.Kubernetes}, {"containerd", &o.Containerd}, {"cni", &o.CNI}} {
		if *f.v, err = normalizeVersion(f.what, *f.v); err != nil {
			return Official{}, err
		}
	}
	if o.Kubernetes == "" && o.Containerd == "" && o.CNI == "" {
		return Official{}, fmt.Errorf("no component: name a version of kubernetes, containerd or cni")
	}
	for _, f := range []struct {
		what string
		u    *string
		def  string
	}{{"kubernetes-release-url", &o.KubernetesURL, DefaultKubernetesURL}, {"containerd-release-url", &o.ContainerdURL, DefaultContainerdURL}, {"cni-release-url", &o.CNIURL, DefaultCNIURL}} {
		if *f.u == "" {
			*f.u = f.def
		}
		if *f.u, err = checkBaseURL(f.what, *f.u); err != nil {
			return Official{}, err
		}
	}
	return o, nil
}

// specKeys are the keys of an official: value, in the order String writes them.
func specKeys() []string {
	return []string{"kubernetes", "containerd", "cni", "kubernetes-release-url", "containerd-release-url", "cni-release-url"}
}

// IsOfficial says whether a --binaries value names the official release layouts.
func IsOfficial(s string) bool { return strings.HasPrefix(s, OfficialPrefix) }

// ParseOfficial reads a --binaries value
//
//	official:kubernetes=v1.33.1,containerd=2.1.4,cni=1.7.1[,kubernetes-release-url=https://…][,containerd-release-url=…][,cni-release-url=…]
//
// All three versions are required: join installs the three components.
func ParseOfficial(s string) (Official, error) {
	rest, ok := strings.CutPrefix(s, OfficialPrefix)
	if !ok {
		return Official{}, fmt.Errorf("--binaries %q: expected %s…", s, OfficialPrefix)
	}
	keys := specKeys()
	seen := map[string]string{}
	for _, kv := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" || !slices.Contains(keys, k) {
			return Official{}, fmt.Errorf("--binaries %q: %q: expected key=value with key one of %s", s, kv, strings.Join(keys, ", "))
		}
		if _, dup := seen[k]; dup {
			return Official{}, fmt.Errorf("--binaries %q: %s given twice", s, k)
		}
		seen[k] = v
	}
	for _, k := range keys[:3] {
		if seen[k] == "" {
			return Official{}, fmt.Errorf("--binaries %q: %s=VERSION is required (join installs kubernetes, containerd and cni)", s, k)
		}
	}
	o, err := Official{
		Kubernetes: seen["kubernetes"], Containerd: seen["containerd"], CNI: seen["cni"],
		KubernetesURL: seen["kubernetes-release-url"], ContainerdURL: seen["containerd-release-url"], CNIURL: seen["cni-release-url"],
	}.Normalize()
	if err != nil {
		return Official{}, fmt.Errorf("--binaries %q: %w", s, err)
	}
	return o, nil
}

// String is the canonical official: value of a normalized o (hosts left out when default).
func (o Official) String() string {
	parts := []string{}
	for _, f := range []struct{ k, v, def string }{
		{"kubernetes", o.Kubernetes, ""}, {"containerd", o.Containerd, ""}, {"cni", o.CNI, ""},
		{"kubernetes-release-url", o.KubernetesURL, DefaultKubernetesURL},
		{"containerd-release-url", o.ContainerdURL, DefaultContainerdURL},
		{"cni-release-url", o.CNIURL, DefaultCNIURL},
	} {
		if f.v != "" && f.v != f.def {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	return OfficialPrefix + strings.Join(parts, ",")
}
