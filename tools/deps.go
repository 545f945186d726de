//go:build tools

// Package tools pins the libraries kubewin builds on, so that go.mod stays stable while packages
// are written in parallel. Remove an import once real code depends on the library.
package tools

import (
	_ "github.com/Microsoft/hcsshim/hcn"
	_ "github.com/containernetworking/cni/libcni"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/vishvananda/netlink"
	_ "golang.org/x/sys/windows/svc/mgr"
	_ "golang.org/x/text/encoding/simplifiedchinese"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/kube-proxy/config/v1alpha1"
	_ "k8s.io/kubelet/config/v1beta1"
	_ "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	_ "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	_ "k8s.io/kubernetes/pkg/proxy/apis/config/scheme"
	_ "k8s.io/kubernetes/pkg/proxy/apis/config/validation"
)
