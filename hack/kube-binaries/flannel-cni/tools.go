//go:build tools

// Package tools pins the flannel CNI plugin so it resolves here (see hack/kube-binaries/build.sh).
//
// It comes from containernetworking/plugins v0.9.1, the last release that carries
// plugins/meta/flannel (v1.0.1 no longer has it): flannel-io/cni-plugin, its maintained home
// since 2021, is not served by this machine's module proxy. Its own module, because flanneld
// (../flannel) requires containernetworking/plugins v1.9.1. The v0.9.1 plugin reads what the
// kube-flannel manifest's cni-conf.json sets (type flannel, delegate hairpinMode and
// isDefaultGateway, optional subnetFile/dataDir) and the subnet.env flanneld writes
// (plugins/meta/flannel/flannel.go loadFlannelSubnetEnv: FLANNEL_NETWORK, FLANNEL_SUBNET,
// FLANNEL_MTU, FLANNEL_IPMASQ), and delegates to the bridge and host-local plugins as
// flannel-io/cni-plugin does.
package tools

import (
	_ "github.com/containernetworking/plugins/plugins/meta/flannel"
)
