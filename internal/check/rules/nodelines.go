package rules

import (
	"fmt"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

// imageUntagged reports whether an image reference names a registry host and has neither a
// tag nor a digest (the runtime then pulls :latest from that registry). A short name such as
// kubeletwin/pause is the image the node guides build locally (docker build -t
// kubeletwin/pause, microsoft/SDN), which the kubelet finds without pulling.
func imageUntagged(ref string) bool {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.Contains(ref, "@") || strings.ContainsAny(ref, "$<{%") {
		return false
	}
	first, _, ok := strings.Cut(ref, "/")
	if !ok || !strings.ContainsAny(first, ".:") {
		return false
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	return !strings.Contains(last, ":")
}

var nodeLineRules = []check.Rule{
	{
		ID: "KW1807", Name: "plain-http-api-server", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "The kubelet or kube-proxy reaches the API server over plain http (--api-servers / --master http://…)",
		Why:       "Over http the node neither authenticates the API server nor encrypts its traffic: anyone on the path can read secrets sent to the node or feed it pods; the insecure port behind it is gone since 1.20.",
		Fix:       "Use a kubeconfig (--kubeconfig) with the API server's https:// address and its CA.",
		Reference: "kubernetes/kubernetes#91506 (insecure port removed, CHANGELOG-1.20); kubernetes.io/docs/concepts/security/controlling-access",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range ctx.CommandLines {
				for _, name := range []string{"api-servers", "master", "server"} {
					f, ok := cl.Last(name)
					if !ok || !usable(f) {
						continue
					}
					for _, v := range strings.Split(f.Value, ",") {
						if strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "http://") {
							emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s reaches the API server at %s over plain http", cl.Component, strings.TrimSpace(v))})
							break
						}
					}
				}
			}
		},
	},
	{
		ID: "KW1120", Name: "missing-cluster-domain", Family: check.FamilyKubelet, Severity: check.Warning,
		Summary:   "The kubelet sets a cluster DNS server but no cluster domain",
		Why:       "Without --cluster-domain (clusterDomain) the kubelet writes no <ns>.svc.<domain> search suffixes into pods' DNS settings: short Service names (my-svc, my-svc.my-ns) do not resolve in pods.",
		Fix:       "--cluster-domain=cluster.local (or clusterDomain: cluster.local in the KubeletConfiguration), the cluster's DNS domain.",
		Reference: "pkg/kubelet/network/dns/dns.go (search paths only when ClusterDomain is set); kubernetes.io/docs/concepts/services-networking/dns-pod-service",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				dns, ok := cl.Last("cluster-dns")
				if !ok || cl.Has("cluster-domain") || configFileUnseen(ctx, cl) || len(cl.Unresolved) > 0 || cniGivesSearch(ctx) {
					continue
				}
				if _, hasConfig := cl.Last("config"); hasConfig {
					set := false
					for _, d := range ctx.KubeletConfigs {
						if d.Config.ClusterDomain != "" {
							set = true
						}
					}
					if set {
						continue
					}
				}
				emit(check.Finding{Location: cl.Loc(&dns), Message: fmt.Sprintf("--cluster-dns=%s without --cluster-domain: pods get no Service search suffixes", dns.Value)})
			}
		},
	},
	{
		ID: "KW1612", Name: "untagged-system-image", Family: check.FamilyRuntime, Severity: check.Warning,
		Summary:   "A system image (pause / sandbox image) without a tag or digest",
		Why:       "An untagged reference means :latest: every node may pull a different pause image, and pause images have no :latest tag on registry.k8s.io or mcr.microsoft.com, so sandboxes fail to start.",
		Fix:       "Pin the tag the release documents (registry.k8s.io/pause:3.10, mcr.microsoft.com/oss/kubernetes/pause:3.9) or a digest.",
		Reference: "kubernetes.io/docs/concepts/containers/images (no tag means :latest); registry.k8s.io/pause tags",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				if f, ok := cl.Last("pod-infra-container-image"); ok && usable(f) && imageUntagged(f.Value) {
					emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s has no tag or digest", f.Value)})
				}
			}
			for _, cc := range ctx.Containerd {
				if imageUntagged(cc.SandboxImage) {
					emit(check.Finding{Location: check.Location{File: cc.File, Line: cc.SandboxImageLine, Field: "sandbox_image"},
						Message: fmt.Sprintf("sandbox_image %s has no tag or digest", cc.SandboxImage)})
				}
			}
		},
	},
}

// cniGivesSearch: a Windows CNI conf's dns.Search gives pods their suffixes itself (win-bridge,
// win-overlay), so the kubelet's cluster domain is not the only source.
func cniGivesSearch(ctx *check.Context) bool {
	for _, c := range ctx.CNIConfs {
		if len(c.Search) > 0 {
			return true
		}
	}
	return false
}
