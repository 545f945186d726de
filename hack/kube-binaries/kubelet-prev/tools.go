//go:build tools

// Package tools pins the kubelet so `go build k8s.io/kubernetes/cmd/kubelet` resolves here.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubelet"
)
