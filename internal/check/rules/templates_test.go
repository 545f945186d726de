package rules

import (
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/check"
)

// Templated artefacts are read as templates (issue 24): one case per class of false positive
// the spent sealed part showed (testdata/check-field/sealed/verdicts.tsv), each a minimal
// artefact written for the test in the shape of the class, with a twin that must still fire
// (flags written literally in a template are judged). "never" lists rules that must not
// report at warning or error; "want" rules that must.
func TestTemplatesReadAsTemplates(t *testing.T) {
	// an Ansible task registering the kubelet as a Windows service, its command line in a
	// folded scalar with Jinja filters, followed by another task
	const ansibleTask = `---
# Install kubelet as a windows service
- name: Install kubelet as service
  ansible.windows.win_service:
    name: kubelet
    start_mode: auto
    path: >-
      "{{ install_path }}\kube-log-runner.exe" --log-file={{ drive.stdout | trim }}/var/log/kubelet.log
      {{ install_path }}\kubelet.exe --windows-service
      --config={{ drive.stdout | trim }}/var/lib/kubelet/config.yaml
      --kubeconfig={{ drive.stdout | trim }}/etc/kubernetes/kubelet.conf
      --cgroups-per-qos=false --enforce-node-allocatable=""
      --container-runtime-endpoint="npipe:////./pipe/containerd-containerd"
      --resolv-conf=""%s

- name: Copy a helper
  ansible.windows.win_template:
    src: templates/Restart.ps1
    dest: "{{ install_path }}\\Restart.ps1"
`
	// a systemd unit template whose ExecStart is continued across {% if %} blocks
	const unitTemplate = `[Service]
ExecStart={{ bin_dir }}/kubelet \
  --config=/var/lib/kubelet/config.yaml \
{%% if RUNTIME == "containerd" %%}
  --container-runtime-endpoint=unix:///run/containerd/containerd.sock \
{%% endif %%}
  --hostname-override={{ inventory_hostname }} \
  --kubeconfig=/etc/kubernetes/kubelet.kubeconfig \
  --root-dir={{ ROOT_DIR }}%s
Restart=always
`
	const containerdTemplate = `version = 2
root = "{{ storage_dir }}"
{%% if 'imports' not in extra | b64decode %%}
imports = ["/etc/containerd/conf.d/*.toml"]
{%% endif %%}
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "{{ pause_image }}"
%s
{{ extra | b64decode }}
`
	const keepalivedTemplate = `vrrp_instance VI-01 {
    state MASTER
    priority 120
    unicast_src_ip {{ inventory_hostname }}
    unicast_peer {
{%% for h in groups['lb'] %%}{%% if h != inventory_hostname %%}
        {{ h }}
{%% endif %%}{%% endfor %%}
    }
    interface {{ LB_IF }}
    virtual_router_id {{ ROUTER_ID }}
    advert_int 1
    track_script {
        check_apiserver
    }
    virtual_ipaddress {
        {{ VIP }}
    }%s
}
vrrp_script check_apiserver {
    script "/etc/keepalived/check.sh"
}
`
	const proxyTemplate = `kind: KubeProxyConfiguration
apiVersion: kubeproxy.config.k8s.io/v1alpha1
clientConnection:
  kubeconfig: "/etc/kubernetes/kube-proxy.kubeconfig"
clusterCIDR: "{{ CLUSTER_CIDR }}"
hostnameOverride: "{{ NODE_NAME }}"
mode: "{{ PROXY_MODE }}"
{%% if PROXY_MODE == "ipvs" %%}
ipvs:
  strictARP: {{ STRICT_ARP }}
  scheduler: ""
{%% endif %%}%s
`
	// a BOSH job's ctl script in PowerShell, an ERB template: the flags come from a Ruby loop
	// over job properties, one <%= "--#{flag}=#{value}" %> per flag
	const erbScript = `function start_kubelet {
  <%-
    include_config = false
    if !iaas.nil? and iaas != "vsphere"
      include_config = true
    end
  -%>
  C:\var\vcap\packages\kubernetes-windows\bin\kubelet.exe ` + "`" + `
  <%-
    if_p('k8s-args') do |args|
      args.each do |flag, value|
  -%>
    <%= "--#{flag}=#{value}" %> ` + "`" + `
  <%-
      end
    end
  -%>
    <% if include_config -%>--cloud-config=<%= p('cloud_config') %><% end %> ` + "`" + `
    --node-labels=<%= labels %> ` + "`" + `
    --config="C:/var/vcap/jobs/kubelet-windows/config/kubeletconfig.yml"%s
}
`
	for _, tt := range []struct {
		name    string
		file    string
		text    string
		bad     string // appended where %s is: a literal problem the template still holds
		version string
		never   []string
		want    []string
	}{
		{"Ansible win_service task: the module's path is the command line, not the YAML",
			"install-kubelet.yml", ansibleTask, "", "1.27",
			[]string{"KW0001", "KW0003", "KW0013", "KW1101", "KW1102", "KW1103", "KW1104", "KW1111", "KW1115", "KW1805", "KW1806"}, nil},
		{"Ansible win_service task: a removed flag written literally is judged",
			"install-kubelet.yml", ansibleTask, "\n      --network-plugin=cni", "1.27", []string{"KW0003", "KW0013"}, []string{"KW1105"}},
		{"systemd unit template: the command continues across {% if %} lines",
			"kubelet.service.j2", unitTemplate, "", "1.24",
			[]string{"KW0006", "KW0013", "KW1805", "KW1806"}, nil},
		{"systemd unit template: a removed flag after the block is judged",
			"kubelet.service.j2", unitTemplate, " \\\n  --network-plugin=cni", "1.24", []string{"KW0013", "KW1805"}, []string{"KW1105"}},
		{"containerd TOML template: parsed as rendered",
			"config.toml.j2", containerdTemplate, "", "1.26", []string{"KW0001"}, nil},
		{"containerd TOML template: mirrors beside config_path still fail the CRI plugin",
			"config.toml.j2", containerdTemplate,
			"  [plugins.\"io.containerd.grpc.v1.cri\".registry]\n    config_path = \"/etc/containerd/certs.d\"\n  [plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n    endpoint = [\"https://mirror.example\"]",
			"1.26", []string{"KW0001"}, []string{"KW1610"}},
		{"keepalived template: placeholders and {% for %} are the renderer's",
			"keepalived.conf.j2", keepalivedTemplate, "", "1.26", []string{"KW0001", "KW1502", "KW1516"}, nil},
		{"keepalived template: a literal bad priority is judged",
			"keepalived.conf.j2", strings.Replace(keepalivedTemplate, "priority 120", "priority 300", 1), "", "1.26",
			[]string{"KW0001", "KW1516"}, []string{"KW1511"}},
		{"ERB PowerShell template: tags are render-time values, code tags bound lines",
			"kubelet_ctl.ps1.erb", erbScript, "", "1.21",
			[]string{"KW0003", "KW0010", "KW0013", "KW1101", "KW1102", "KW1103", "KW1104", "KW1111", "KW1805", "KW1806"}, nil},
		{"ERB PowerShell template: a removed flag written literally is judged",
			"kubelet_ctl.ps1.erb", erbScript, " `\n    --network-plugin=cni", "1.24", []string{"KW0003", "KW0010", "KW0013"}, []string{"KW1105"}},
		{"kube-proxy config template: a typed field's placeholder and {% if %} parse",
			"kube-proxy-config.yaml.j2", proxyTemplate, "", "1.26", []string{"KW0001", "KW0002", "KW0005"}, nil},
		{"kube-proxy config template: an unknown field written literally is judged",
			"kube-proxy-config.yaml.j2", proxyTemplate, "\nudpIdleTimeout: 250ms", "1.26", []string{"KW0001"}, []string{"KW0005"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(tt.text, "%s", tt.bad, 1)
			text = strings.ReplaceAll(text, "%%", "%")
			rep := runCase(t, tc{files: map[string]string{tt.file: text}, version: tt.version})
			for _, id := range tt.never {
				for _, f := range findingsOf(rep, id) {
					if f.Severity > check.Info {
						t.Errorf("%s %s at %s:%d: %s", f.Severity, id, f.Location.File, f.Location.Line, f.Message)
					}
				}
			}
			for _, id := range tt.want {
				if !slicesAny(findingsOf(rep, id), func(f check.Finding) bool { return f.Severity > check.Info }) {
					t.Errorf("%s did not fire (findings: %s)", id, summary(rep))
				}
			}
		})
	}
}

func slicesAny(fs []check.Finding, p func(check.Finding) bool) bool {
	for _, f := range fs {
		if p(f) {
			return true
		}
	}
	return false
}

func summary(rep *check.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.RuleID + "@" + f.Severity.String() + " ")
	}
	return b.String()
}

// envsubst ${VAR} and command substitutions $(…) are values known when the script runs: no
// finding judges them, and "exec" before the program is the shell's (it was read as the
// program, the real one as an unexpected argument, KW0013). A flag written literally is still judged.
func TestRunTimeValuesNotJudged(t *testing.T) {
	const script = "#!/bin/sh\nexec /usr/local/bin/kube-proxy --hostname-override=$(hostname) --cluster-cidr=${CLUSTER_CIDR} --bind-address=${NODE_IP} --proxy-mode=${MODE}%s\n"
	for _, tt := range []struct {
		name, bad string
		want      []string
	}{
		{"placeholders only", "", nil},
		{"a literal unknown flag", " --resource-container=/kube-proxy", []string{"KW0003"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep := runCase(t, tc{files: map[string]string{"start-proxy.sh": strings.Replace(script, "%s", tt.bad, 1)}, version: "1.30"})
			for _, f := range rep.Findings {
				if f.Severity > check.Info && f.RuleID != "KW0014" && !slicesContains(tt.want, f.RuleID) {
					t.Errorf("%s %s: %s", f.Severity, f.RuleID, f.Message)
				}
			}
			for _, id := range tt.want {
				if len(findingsOf(rep, id)) == 0 {
					t.Errorf("%s did not fire: %s", id, summary(rep))
				}
			}
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
