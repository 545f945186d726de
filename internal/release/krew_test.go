package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewValidator is krew's own manifest validator (the one krew-index's CI runs on every
// plugin), at the krew release the manifest format is taken from. Its validation package is
// internal to the krew module (sigs.k8s.io/krew/internal/index/validation), so it cannot be
// imported; the go command builds and runs the validator's main package with krew's own go.mod.
const krewValidator = "sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3"

// krewValidatorBinary installs krew's validator into a temporary directory.
func krewValidatorBinary(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "install", krewValidator)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	cmd.Dir = bin
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install %s: %v\n%s", krewValidator, err, out)
	}
	return filepath.Join(bin, "validate-krew-manifest")
}

// validateKrew runs krew's validator on manifest (a file named <plugin>.yaml). -skip-install:
// installing would run `kubectl krew install`, which this machine does not have.
func validateKrew(t *testing.T, validator, manifest string) (string, error) {
	t.Helper()
	out, err := exec.Command(validator, "-manifest", manifest, "-skip-install").CombinedOutput()
	return string(out), err
}

func TestKrewManifest(t *testing.T) {
	targets := DefaultTargets
	sums := map[Target]string{}
	for i, tg := range targets {
		sums[tg] = strings.Repeat(string(rune('a'+i)), 64)
	}
	b, err := KrewManifest("v0.1.0", "https://example.test/dl/v0.1.0/", targets, sums)
	if err != nil {
		t.Fatal(err)
	}
	var p krewPlugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(p.Spec.Platforms) != len(targets) {
		t.Fatalf("%d platforms, want %d", len(p.Spec.Platforms), len(targets))
	}
	for i, pl := range p.Spec.Platforms {
		tg := targets[i]
		if pl.URI != "https://example.test/dl/v0.1.0/"+ArchiveName("v0.1.0", tg) || pl.Sha256 != sums[tg] ||
			pl.Selector.MatchLabels["os"] != tg.OS || pl.Selector.MatchLabels["arch"] != tg.Arch || pl.Bin != ExeName(tg) {
			t.Errorf("platform %s: %+v", tg, pl)
		}
	}
	if _, err := KrewManifest("v0.1.0", "https://x", targets, map[Target]string{}); err == nil {
		t.Error("a manifest without checksums was written")
	}

	validator := krewValidatorBinary(t)
	dir := t.TempDir()
	good := filepath.Join(dir, KrewManifestName)
	if err := os.WriteFile(good, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := validateKrew(t, validator, good); err != nil {
		t.Fatalf("krew's validator rejects the manifest: %v\n%s\n%s", err, out, b)
	}
	// The validator is not a rubber stamp: a manifest with a version krew cannot parse and one
	// whose checksum is not a SHA-256 are refused.
	for name, broken := range map[string]string{
		"version": strings.Replace(string(b), "version: v0.1.0", "version: 0.1", 1),
		"sha256":  strings.Replace(string(b), sums[targets[0]], "abc", 1),
	} {
		bad := filepath.Join(t.TempDir(), KrewManifestName)
		if err := os.WriteFile(bad, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := validateKrew(t, validator, bad); err == nil {
			t.Errorf("krew's validator accepts a manifest with a broken %s:\n%s", name, out)
		}
	}
}
