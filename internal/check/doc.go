// Package check is kubewin's preflight: a catalogue of rules run over a cluster spec, its plan,
// hand-written node configuration (kubelet and kube-proxy command lines and config files, CNI
// confs, containerd config.toml, keepalived.conf, flannel net-conf.json, kubeconfigs, scripts)
// and workload manifests. The rules themselves live in internal/check/rules, one file per
// family.
//
// check runs in four stages, input → context → rules → output; each file of this package
// belongs to one (issue 24 asks the layout to show it; readers with no dependency on this
// package are packages of their own).
//
// # Input: recognise each file by content and read it in its own language
//
//   - recognition and dispatch: input.go (Load, loadFile), bundle.go (kubewin's own files)
//   - templates first: internal/check/templates (Jinja2/Ansible, Go/Helm syntax) and
//     templated.go (how a template's placeholders and statements are read)
//   - command lines: tokenize.go (the sh, cmd, Windows argv and PowerShell splitter),
//     cmdline.go (flags, programs, launchers), scripts.go (scripts, units, batch files,
//     kubeadm-flags.env, flag files), internal/check/psscript (PowerShell evaluated),
//     ansible.go (Ansible task files through their modules)
//   - data formats: configs.go (KubeletConfiguration, KubeProxyConfiguration, CNI json,
//     flannel net-conf, docker daemon.json, kubeconfig, containerd TOML, sysctl),
//     keepalived.go (keepalived.conf), manifests.go and yamlpos.go (objects, positions)
//
// # Context: what the inputs are for
//
//   - context.go: the Context rules read (target release, spec, plan, parsed inputs)
//   - input.go assignNodes/siblingOS: each command line's OS from evidence, else OSAssumed
//   - templated.go: which inputs are templates
//   - per-release knowledge rules judge against: flagspec.go, flagvalues.go, gates.go,
//     kubeletdefaults.go, kubeletvalidation.go, proxyconfig.go, configpaths.go
//
// # Rules
//
//   - engine.go runs the catalogue (internal/check/rules), enforces each rule's Scope (OS,
//     known OS, release range), merges copies of one problem, applies ignores
//
// # Output
//
//   - finding.go (findings, locations, severities) and output.go (text, JSON, SARIF)
package check
