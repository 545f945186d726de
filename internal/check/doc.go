// Package check is kubewin's preflight: a catalogue of rules run over a cluster spec, its plan,
// hand-written node configuration (kubelet and kube-proxy command lines and config files, CNI
// confs, containerd config.toml, keepalived.conf, flannel net-conf.json, kubeconfigs, scripts)
// and workload manifests. The rules themselves live in internal/check/rules, one file per
// family.
//
// # Pipeline
//
// check runs in four stages; each file of this package belongs to one (issue 24 asks for the
// layout to show it; the readers with no dependency on this package are packages of their own).
//
// 1. Input — recognise each file by content and read it in its own language
//   - recognition and dispatch: input.go (Load, loadFile), bundle.go (kubewin's own files)
//   - templates first: internal/check/templates (Jinja2/Ansible, Go/Helm syntax) and
//     templated.go (how a template's placeholders and statements are read)
//   - command lines: tokenize.go (the sh / cmd / Windows argv / PowerShell splitter),
//     cmdline.go (flags, programs, launchers), scripts.go (scripts, units, batch files,
//     kubeadm-flags.env, flag files), internal/check/psscript (PowerShell evaluated),
//     ansible.go (Ansible task files through their modules)
//   - data formats: configs.go (KubeletConfiguration, KubeProxyConfiguration, CNI json,
//     flannel net-conf, docker daemon.json, kubeconfig, containerd TOML, sysctl), keepalived.go
//     (keepalived.conf), manifests.go and yamlpos.go (Kubernetes objects and positions)
//
//  2. Context — what the inputs are for: context.go (Context: target release, spec, plan, the
//     parsed inputs), assignNodes/siblingOS in input.go (each command line's OS from evidence,
//     OSAssumed otherwise), templated.go (which inputs are templates), and the per-release
//     knowledge rules judge against: flagspec.go, flagvalues.go, gates.go, kubeletdefaults.go,
//     kubeletvalidation.go, proxyconfig.go, configpaths.go
//
//  3. Rules — engine.go runs the catalogue (internal/check/rules), enforces each rule's Scope
//     (OS, known OS, release range), merges copies of one problem, applies ignores
//
// 4. Output — finding.go (findings, locations, severities) and output.go (text, JSON, SARIF)
package check
