package rules

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/kubewin/kubewin/internal/check"
)

// envFileDefines names, by the base name of an environment file the kubelet's systemd unit
// reads, the variable that file is known to set:
//   - kubeadm-flags.env: kubeadm init/join write KUBELET_KUBEADM_ARGS there
//     (k8s.io/kubernetes cmd/kubeadm/app/phases/kubelet/flags.go, WriteKubeletDynamicEnvFile;
//     constants.KubeletEnvFileVariableName);
//   - /etc/default/kubelet (deb) and /etc/sysconfig/kubelet (rpm): the kubeadm packages ship
//     the file with an empty KUBELET_EXTRA_ARGS= line (kubernetes/release packages, and the
//     comment in kubeadm's 10-kubeadm.conf: "KUBELET_EXTRA_ARGS should be sourced from this
//     file").
var envFileDefines = map[string]string{
	"kubeadm-flags.env":      "KUBELET_KUBEADM_ARGS",
	"/etc/default/kubelet":   "KUBELET_EXTRA_ARGS",
	"/etc/sysconfig/kubelet": "KUBELET_EXTRA_ARGS",
}

// definedBy returns the variable the environment file p is known to set.
func definedBy(p string) (string, bool) {
	if v, ok := envFileDefines[p]; ok {
		return v, true
	}
	v, ok := envFileDefines[path.Base(p)]
	return v, ok && strings.HasSuffix(p, ".env")
}

var unitEnvRules = []check.Rule{
	{
		ID: "KW1121", Name: "unit-environment-overridden", Family: check.FamilyKubelet, Severity: check.Warning,
		Summary:   "A kubelet unit sets a variable with Environment= that an EnvironmentFile= it also reads sets again",
		Why:       "systemd reads EnvironmentFile= after Environment= and the file wins (\"Settings from these files override settings made with Environment=\"): the flags written in the unit never reach the kubelet once kubeadm (KUBELET_KUBEADM_ARGS in kubeadm-flags.env) or the package (KUBELET_EXTRA_ARGS in /etc/default/kubelet) has written the file.",
		Fix:       "Put the flags where the file that wins is written: kubeadm's nodeRegistration.kubeletExtraArgs (or the KubeletConfiguration) for KUBELET_KUBEADM_ARGS, /etc/default/kubelet (or /etc/sysconfig/kubelet) for KUBELET_EXTRA_ARGS; or use a variable no environment file sets.",
		Reference: "systemd.exec(5) EnvironmentFile=; k8s.io/kubernetes cmd/kubeadm/app/phases/kubelet/flags.go (kubeadm-flags.env); kubeadm's 10-kubeadm.conf drop-in",
		Check: func(ctx *check.Context, emit check.Emitter) {
			for _, sc := range ctx.Scripts {
				// the unit's EnvironmentFile= lines: this file's, and those of drop-ins given
				// with it in the same directory (drop-ins of one unit are merged)
				files := map[string]string{}
				for _, o := range ctx.Scripts {
					if o != sc && filepath.Dir(o.File) != filepath.Dir(sc.File) {
						continue
					}
					for _, f := range o.UnitEnvFiles {
						if v, ok := definedBy(f.Name); ok {
							where := fmt.Sprintf("line %d", f.Line)
							if o != sc {
								where = filepath.Base(o.File) + ":" + fmt.Sprint(f.Line)
							}
							files[v] = f.Name + " (" + where + ")"
						}
					}
				}
				for _, e := range sc.UnitEnv {
					if by, ok := files[e.Name]; ok {
						emit(check.Finding{Location: check.Location{File: sc.File, Line: e.Line},
							Message: fmt.Sprintf("Environment= sets %s, but the unit also reads %s, which sets %s and overrides it", e.Name, by, e.Name)})
					}
				}
			}
		},
	},
}
