package rules

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/kubewin/kubewin/internal/check"
	"github.com/kubewin/kubewin/internal/platform"
)

// adminUser reports whether a kubeconfig user carries cluster-admin credentials.
func adminUser(u check.KubeconfigUser) (bool, string) {
	for _, g := range u.Groups {
		if g == "system:masters" || g == "kubeadm:cluster-admins" {
			return true, "its client certificate is in group " + g
		}
	}
	if u.CommonName == "kubernetes-admin" || u.Name == "kubernetes-admin" {
		return true, "it is kubeadm's kubernetes-admin"
	}
	return false, ""
}

var securityRules = []check.Rule{
	{
		ID: "KW1808", Name: "kubeadm-unsafe-skip-ca-verification", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "A kubeadm JoinConfiguration discovers the cluster with unsafeSkipCAVerification: true",
		Why:       "Without caCertHashes the joining node trusts whichever API server answers with the bootstrap token: another machine on the path can impersonate the control plane and hand the node its own CA and workloads.",
		Fix:       "Pin the CA with discovery.bootstrapToken.caCertHashes (sha256:<hash of the CA's public key>, printed by kubeadm token create --print-join-command) and drop unsafeSkipCAVerification.",
		Reference: "k8s.io/kubernetes cmd/kubeadm/app/apis/kubeadm/v1beta4/types.go (BootstrapTokenDiscovery.UnsafeSkipCAVerification: \"This can weaken the security of kubeadm since other nodes can impersonate the control-plane\"); kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-join",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, d := range ctx.KubeadmConfigs {
				if d.UnsafeSkipCAVerification == 0 {
					continue
				}
				loc := check.Location{File: d.File, Line: d.UnsafeSkipCAVerification, Field: "discovery.bootstrapToken.unsafeSkipCAVerification"}
				switch t, isTemplate := ctx.Template(d.File); {
				case d.UnsafeSkipRenderTime:
					emit(check.Finding{Location: loc, Severity: check.Info,
						Message: "unsafeSkipCAVerification is a template placeholder: whether CA verification is skipped is decided at render time"})
				case isTemplate && t.Conditional:
					emit(check.Finding{Location: loc,
						Message: "unsafeSkipCAVerification: true in a template branch: when that branch is rendered the node joins without verifying the control plane's CA"})
				default:
					emit(check.Finding{Location: loc, Message: "unsafeSkipCAVerification: true: the node joins without verifying the control plane's CA"})
				}
			}
		},
	},
	{
		ID: "KW1801", Name: "admin-kubeconfig-on-node", Family: check.FamilySecurity, Severity: check.Error,
		Summary:   "A node gets cluster-admin credentials (admin.conf / system:masters)",
		Why:       "Anyone with access to the Windows node (or a pod escaping to it) owns the whole cluster; the kubelet needs only its own node identity.",
		Fix:       "Join with a bootstrap token (kubeadm join or --bootstrap-kubeconfig) so the kubelet gets a system:node:<name> certificate; never copy /etc/kubernetes/admin.conf to nodes.",
		Reference: refSeed000 + " §2.3 (kubeconfig copied from admin.conf); seed 004 (kubeconfig from the master); kubernetes.io/docs/reference/access-authn-authz/node",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, kc := range ctx.Kubeconfigs {
				for _, u := range kc.Users {
					if ok, why := adminUser(u); ok {
						emit(check.Finding{Location: check.Location{File: kc.File, Line: u.Line, Field: "users." + u.Name},
							Message: fmt.Sprintf("kubeconfig user %q has cluster-admin rights: %s", u.Name, why)})
					}
				}
			}
			for _, cl := range ctx.CommandLines {
				for _, name := range []string{"kubeconfig", "bootstrap-kubeconfig"} {
					f, ok := cl.Last(name)
					if !ok || !usable(f) {
						continue
					}
					base := strings.ToLower(filepath.Base(strings.ReplaceAll(f.Value, `\`, "/")))
					if base == "admin.conf" || base == "super-admin.conf" {
						emit(check.Finding{Location: cl.Loc(&f), Message: fmt.Sprintf("%s %s=%s points at the cluster's admin kubeconfig", cl.Component, f.Written, f.Value)})
					}
				}
			}
		},
	},
	{
		ID: "KW1802", Name: "firewall-disabled", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "A script turns the host firewall off",
		Why:       "Turning off every firewall profile exposes the kubelet, RDP/SSH and every host service to the whole network; only the pod and service ports need opening.",
		Fix:       "Keep the firewall on and add rules (New-NetFirewallRule) for kubelet 10250, NodePorts 30000-32767 and the CNI's ports.",
		Reference: refSeed000 + " §2.1.3 (not recommended in production); " + refSeed002 + " (netsh advfirewall ... state off)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, s := range ctx.Scripts {
				for _, l := range s.FirewallOff {
					text := ""
					if l-1 < len(s.Lines) {
						text = strings.TrimSpace(s.Lines[l-1])
					}
					emit(check.Finding{Location: check.Location{File: s.File, Line: l}, Message: fmt.Sprintf("%q", text)})
				}
			}
		},
	},
	{
		ID: "KW1803", Name: "plaintext-vrrp-auth", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "keepalived relies on auth_type PASS",
		Why:       "PASS sends the password in clear text in every advert; anyone on the segment can read it and take over the Windows gateways.",
		Fix:       "Drop authentication (VRRPv3 has none) and protect the segment instead: unicast peers, a dedicated VLAN, firewall rules for protocol 112.",
		Reference: "RFC 3768 §10 (simple text password provides no protection); keepalived.conf(5)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, k := range allInstances(ctx) {
				if k.in.AuthType == "PASS" {
					emit(check.Finding{Location: k.loc(k.in.AuthLine), Message: fmt.Sprintf("vrrp_instance %s uses auth_type PASS", k.in.Name)})
				}
			}
		},
	},
	{
		ID: "KW1804", Name: "insecure-registry", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "An image registry is used over plain HTTP or without TLS verification",
		Why:       "Images can be replaced in transit; a node pulling a tampered pause or system image runs attacker code.",
		Fix:       "Serve the registry over TLS with a certificate the nodes trust (containerd hosts.toml ca), then drop the insecure setting.",
		Reference: refSeed000 + " §2.1.4 (insecure-registries); containerd docs/hosts.md",
		Check: func(ctx *check.Context, emit check.Emitter) {
			if ctx.Spec != nil {
				for i, r := range ctx.Spec.Spec.Images.InsecureRegistries {
					emit(check.Finding{Location: ctx.SpecLoc(fmt.Sprintf("spec.images.insecureRegistries[%d]", i)), Message: "insecure registry " + r})
				}
			}
			for _, c := range ctx.Containerd {
				for _, r := range c.Insecure {
					emit(check.Finding{Location: check.Location{File: c.File, Line: r.Line}, Message: fmt.Sprintf("%s: %s", r.Host, r.Reason)})
				}
			}
			for _, d := range ctx.DockerDaemons {
				for i, r := range d.InsecureRegistries {
					p := fmt.Sprintf("insecure-registries[%d]", i)
					emit(check.Finding{Location: check.Location{File: d.File, Field: p, Line: d.Pos.Line(p)}, Message: "insecure registry " + r})
				}
			}
		},
	},
	{
		ID: "KW1805", Name: "kubelet-anonymous-auth", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "The kubelet's API accepts anonymous requests",
		Why:       "A kubelet configured only by flags keeps the legacy defaults: anonymous auth on and authorization AlwaysAllow, so anyone reaching port 10250 can exec into pods.",
		Fix:       "--anonymous-auth=false --authentication-token-webhook=true --authorization-mode=Webhook --client-ca-file=<CA> (or the same in a KubeletConfiguration).",
		Reference: "cmd/kubelet/app/options/options.go applyLegacyDefaults; kubernetes.io/docs/reference/access-authn-authz/kubelet-authn-authz",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				if configFileUnseen(ctx, cl) || cl.Has("config") {
					continue
				}
				anon, hasAnon := cl.Last("anonymous-auth")
				mode, hasMode := cl.Last("authorization-mode")
				switch {
				case hasAnon && !isTrue(anon) && hasMode && !strings.EqualFold(mode.Value, "AlwaysAllow"):
				case hasAnon && isTrue(anon):
					emit(check.Finding{Location: cl.Loc(&anon), Message: "--anonymous-auth=true"})
				case !hasAnon:
					emit(check.Finding{Location: cl.Loc(nil), Message: "no --anonymous-auth=false and no --config: anonymous requests are allowed (legacy flag defaults)"})
				case !hasMode || strings.EqualFold(mode.Value, "AlwaysAllow"):
					emit(check.Finding{Location: cl.Loc(nil), Message: "authorization mode is AlwaysAllow (legacy flag default)"})
				}
			}
			for _, d := range ctx.KubeletConfigs {
				if ptr.Deref(d.Config.Authentication.Anonymous.Enabled, false) {
					emit(check.Finding{Location: check.Location{File: d.File, Field: "authentication.anonymous.enabled", Line: d.Pos.Line("authentication.anonymous.enabled")},
						Message: "authentication.anonymous.enabled: true"})
				}
			}
		},
	},
	{
		ID: "KW1806", Name: "kubelet-read-only-port", Family: check.FamilySecurity, Severity: check.Warning,
		Summary:   "The kubelet's unauthenticated read-only port is open",
		Why:       "Port 10255 serves pod specs and metrics without authentication; flag-configured kubelets open it by default.",
		Fix:       "--read-only-port=0 (readOnlyPort: 0).",
		Reference: "cmd/kubelet/app/options/options.go applyLegacyDefaults (--read-only-port 10255)",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, cl := range commandLines(ctx, platform.Kubelet) {
				f, ok := cl.Last("read-only-port")
				switch {
				case ok && usable(f) && strings.TrimSpace(f.Value) != "0":
					emit(check.Finding{Location: cl.Loc(&f), Message: "--read-only-port=" + f.Value})
				case !ok && !cl.Has("config") && !cl.Partial:
					emit(check.Finding{Location: cl.Loc(nil), Message: "no --read-only-port=0 and no --config: the read-only port defaults to 10255"})
				}
			}
			for _, d := range ctx.KubeletConfigs {
				if d.Config.ReadOnlyPort != 0 {
					emit(check.Finding{Location: check.Location{File: d.File, Field: "readOnlyPort", Line: d.Pos.Line("readOnlyPort")},
						Message: fmt.Sprintf("readOnlyPort: %d", d.Config.ReadOnlyPort)})
				}
			}
		},
	},
}
