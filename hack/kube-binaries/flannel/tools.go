//go:build tools

// Package tools pins flanneld (github.com/flannel-io/flannel, whose main package is the module
// root) so it resolves here (see hack/kube-binaries/build.sh). Its CNI plugin is in ../flannel-cni.
package tools

import (
	_ "github.com/flannel-io/flannel"
)
