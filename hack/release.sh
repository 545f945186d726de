#!/usr/bin/env bash
# Builds a kubewin release: hack/release.sh VERSION [OUTDIR] (default _release/VERSION).
# The binaries for linux/amd64, linux/arm64, windows/amd64 and windows/arm64, their archives,
# an SPDX SBOM, a krew manifest, the gateway image (OCI layout tar, amd64+arm64) and SHA256SUMS.
# Reproducible: the same commit gives the same bytes. Needs go, git, apt-get and dpkg-deb
# (Debian); the Debian packages are cached under ~/.cache/kubewin/apt. Flags of the builder
# (hack/release/main.go) may come first: hack/release.sh -no-image v0.1.0.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run ./hack/release "$@"
