#!/usr/bin/env bash
# The test command (README.md): installs what the tests need, builds the real kube-apiserver and
# etcd once (cached), then vets and tests everything. Tests that need root (network namespaces,
# keepalived) run as part of it; run as root, as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/install-deps.sh
KUBEWIN_TEST_ASSETS=$(hack/kube-binaries/build.sh)
export KUBEWIN_TEST_ASSETS
echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './hack/*'))
if [ -n "$unformatted" ]; then echo "gofmt needed: $unformatted" >&2; exit 1; fi
echo "== go vet (linux)"
go vet ./...
echo "== go vet (windows)"
GOOS=windows go vet ./...
echo "== go test -c (windows): the Windows host layer's packages and their tests build for Windows"
wintests=$(mktemp -d)
trap 'rm -rf "$wintests"' EXIT
GOOS=windows go test -c -o "$wintests" ./internal/winnode/ ./internal/join/ ./internal/nodecheck/ ./internal/nodestatus/ ./cmd/kubewin/
echo "== go test"
go test -count=1 -timeout 45m "$@" ./...
