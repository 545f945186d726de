#!/usr/bin/env bash
# Builds kube-apiserver and etcd from the Go module proxy for the test harness, once per version.
# The binaries are cached under $KUBEWIN_ASSETS_DIR (default: <go env GOCACHE>/kubewin-assets) so
# CI and later test runs reuse them (cold: about 5 minutes; warm: instant).
# Prints the directory holding both binaries (use as KUBEWIN_TEST_ASSETS or KUBEBUILDER_ASSETS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
k8s_version=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/kube-apiserver/go.mod")
etcd_version=$(sed -n 's/^require go.etcd.io\/etcd\/server\/v3 \(v[0-9.]*\)$/\1/p' "$here/etcd/go.mod")
base=${KUBEWIN_ASSETS_DIR:-$(go env GOCACHE)/kubewin-assets}
# recipe: bump when the build recipe changes so caches of older recipes are not reused
# (r2: kube-apiserver reports its release through /version like an official build).
recipe=r2
out="$base/k8s-$k8s_version-etcd-$etcd_version-$recipe"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
build() { # name module-dir package [ldflags]
  local name=$1 dir=$2 pkg=$3 ldflags=${4:-}
  if [ -x "$out/$name" ]; then return; fi
  echo "building $name ($pkg) into $out (first time only)" >&2
  (cd "$dir" && CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "$ldflags" -o "$out/.$name.tmp" "$pkg")
  mv "$out/.$name.tmp" "$out/$name"
}
# Without these the binary reports v0.0.0-master and clients (kubewin discover) cannot read the
# release from /version as they do on real clusters.
minor=$(echo "$k8s_version" | cut -d. -f2)
v=k8s.io/component-base/version
build kube-apiserver "$here/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
  "-X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
build etcd "$here/etcd" go.etcd.io/etcd/server/v3
echo "$out"
