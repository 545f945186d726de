#!/usr/bin/env bash
# Builds the real components of the test harness from the Go module proxy, once per version:
# kube-apiserver and etcd (every API test), and for the join end-to-end tests the node side —
# kube-controller-manager, kube-scheduler (DaemonSet pods), kubelet, kube-proxy, containerd
# (+ shim, ctr) and the CNI reference plugins. runc comes from Debian (hack/install-deps.sh): a
# runc built here without libseccomp rejects the CRI's default seccomp profile.
# The binaries are cached under $KUBEWIN_ASSETS_DIR (default: <go env GOCACHE>/kubewin-assets) so
# CI and later test runs reuse them (cold: about 15 minutes; warm: instant).
# Prints the directory holding them (use as KUBEWIN_TEST_ASSETS or KUBEBUILDER_ASSETS).
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
build() { # name module-dir package [ldflags] [cgo] [tags]
  local name=$1 dir=$2 pkg=$3 ldflags=${4:-} cgo=${5:-0} tags=${6:-}
  if [ -x "$out/$name" ]; then return; fi
  echo "building $name ($pkg) into $out (first time only)" >&2
  (cd "$dir" && CGO_ENABLED=$cgo go build -mod=mod -trimpath -tags "$tags" -ldflags "$ldflags" -o "$out/.$name.tmp" "$pkg")
  mv "$out/.$name.tmp" "$out/$name"
}
# Without these the binary reports v0.0.0-master and clients (kubewin discover) cannot read the
# release from /version as they do on real clusters.
minor=$(echo "$k8s_version" | cut -d. -f2)
v=k8s.io/component-base/version
build kube-apiserver "$here/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
  "-X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
build etcd "$here/etcd" go.etcd.io/etcd/server/v3
if [ "${KUBEWIN_NODE_BINARIES:-1}" = 1 ]; then
  kv="-X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean"
  for c in kube-controller-manager kube-scheduler kubelet kube-proxy; do
    build $c "$here/kube-apiserver" k8s.io/kubernetes/cmd/$c "$kv"
  done
  # The previous kubelet release, for the rollout end-to-end test (nodes join at it and roll to
  # $k8s_version; the skew policy forbids a kubelet newer than the API server).
  prev=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/kubelet-prev/go.mod")
  build "kubelet-$prev" "$here/kubelet-prev" k8s.io/kubernetes/cmd/kubelet \
    "-X $v.gitVersion=$prev -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$prev" | cut -d. -f2) -X $v.gitTreeState=clean"
  ctrd=github.com/containerd/containerd/v2
  # containerd itself needs cgo (its snapshotters); btrfs headers are not installed, and kubewin
  # uses the overlayfs/native snapshotters only.
  build containerd "$here/containerd" $ctrd/cmd/containerd "" 1 no_btrfs
  build containerd-shim-runc-v2 "$here/containerd" $ctrd/cmd/containerd-shim-runc-v2
  build ctr "$here/containerd" $ctrd/cmd/ctr
  cni=github.com/containernetworking/plugins/plugins
  mkdir -p "$out/cni"
  for p in main/bridge ipam/host-local main/loopback meta/portmap; do
    build "cni/$(basename $p)" "$here/cni-plugins" $cni/$p
  done
  # flanneld (cgo as flannel's Makefile builds it on amd64) and the flannel CNI plugin for the
  # flannel end-to-end test, below a directory named by the flannel release of flannel/go.mod.
  fv=$(sed -n 's/^require github.com\/flannel-io\/flannel \(v[0-9.]*\)$/\1/p' "$here/flannel/go.mod")
  mkdir -p "$out/flannel-$fv" "$out/.flannel-$fv"
  build "flannel-$fv/flanneld" "$here/flannel" github.com/flannel-io/flannel "-X github.com/flannel-io/flannel/pkg/version.Version=$fv" 1
  build "flannel-$fv/flannel" "$here/flannel-cni" $cni/meta/flannel
fi
echo "$out"
