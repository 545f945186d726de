package join

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubewin/kubewin/internal/render"
)

// flannelConflist is Documentation/kube-flannel.yml's cni-conf.json (flannel-io/flannel
// v0.28.4) with subnetFile set, as a node whose flanneld writes elsewhere than /run/flannel.
const flannelConflist = `{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    {"type": "flannel", "subnetFile": "%s", "delegate": {"hairpinMode": true, "isDefaultGateway": true}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}`

// What a flannel node's pod network lacks is named, one thing at a time, in the order the
// DaemonSet puts them in place; a complete one is accepted.
func TestCheckFlannelNetwork(t *testing.T) {
	type setup struct {
		conf, confName string
		bins           []string
		env            string
	}
	full := setup{confName: "10-flannel.conflist", conf: flannelConflist, bins: []string{"flannel", "portmap"},
		env: "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"}
	with := func(f func(*setup)) setup { s := full; f(&s); return s }
	cases := []struct {
		name string
		s    setup
		want string // "" when complete
	}{
		{"complete", full, ""},
		{"no conflist", with(func(s *setup) { s.conf = "" }), "no CNI configuration in"},
		{"another CNI sorts first", with(func(s *setup) {
			s.confName = "05-other.conflist"
			s.conf = `{"name":"x","cniVersion":"1.0.0","plugins":[{"type":"bridge"}]}`
		}), "has no flannel plugin (plugins bridge)"},
		{"no flannel plugin binary", with(func(s *setup) { s.bins = []string{"portmap"} }), "no CNI plugin flannel in"},
		{"no portmap binary", with(func(s *setup) { s.bins = []string{"flannel"} }), "no CNI plugin portmap in"},
		{"no subnet.env", with(func(s *setup) { s.env = "" }), "flanneld has not written"},
		{"no FLANNEL_SUBNET", with(func(s *setup) { s.env = "FLANNEL_NETWORK=10.244.0.0/16\n" }), "has no FLANNEL_SUBNET"},
		{"another node's lease", with(func(s *setup) { s.env = "FLANNEL_SUBNET=10.244.7.1/24\n" }), "says FLANNEL_SUBNET=10.244.7.1/24, but the Node's pod CIDR is 10.244.3.0/24"},
		{"not KEY=VALUE", with(func(s *setup) { s.env = "FLANNEL_SUBNET 10.244.3.1/24\n" }), "line 1 is not KEY=VALUE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			paths := render.LinuxPathsUnder(root)
			subnetFile := filepath.Join(root, "run", "flannel", "subnet.env")
			if c.s.conf != "" {
				conf := c.s.conf
				if strings.Contains(conf, "%s") {
					conf = strings.Replace(conf, "%s", subnetFile, 1)
				}
				writeTestFile(t, filepath.Join(paths.CNIConfDir, c.s.confName), conf)
			}
			for _, b := range c.s.bins {
				writeTestFile(t, filepath.Join(paths.CNIBinDir, b), "plugin")
			}
			if c.s.env != "" {
				writeTestFile(t, subnetFile, c.s.env)
			}
			st, missing := checkFlannelNetwork(paths, "10.244.3.0/24")
			if c.want == "" {
				if missing != "" || st.SubnetFile != subnetFile || st.Subnet.String() != "10.244.3.1/24" {
					t.Fatalf("complete network: %q, state %+v", missing, st)
				}
				return
			}
			if !strings.Contains(missing, c.want) {
				t.Errorf("missing = %q, want it to name %q", missing, c.want)
			}
		})
	}
}

// Without subnetFile the plugin reads flanneld's default path, and so does the check.
func TestCheckFlannelNetworkDefaultSubnetFile(t *testing.T) {
	paths := render.LinuxPathsUnder(t.TempDir())
	writeTestFile(t, filepath.Join(paths.CNIConfDir, "10-flannel.conflist"), `{"name":"cbr0","cniVersion":"0.3.1","plugins":[{"type":"flannel","delegate":{}}]}`)
	writeTestFile(t, filepath.Join(paths.CNIBinDir, "flannel"), "plugin")
	st, missing := checkFlannelNetwork(paths, "10.244.3.0/24")
	if st.SubnetFile != flannelDefaultSubnetFile || missing == "" {
		t.Errorf("subnet file %q (%q), want %s", st.SubnetFile, missing, flannelDefaultSubnetFile)
	}
}

func TestParseSubnetEnv(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]string
		err  bool
	}{
		// pkg/subnet/subnet.go WriteSubnetFile's output for an IPv4 vxlan node.
		{"FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n",
			map[string]string{"FLANNEL_NETWORK": "10.244.0.0/16", "FLANNEL_SUBNET": "10.244.1.1/24", "FLANNEL_MTU": "1450", "FLANNEL_IPMASQ": "true"}, false},
		{"\n  FLANNEL_MTU = 1450 \n\n", map[string]string{"FLANNEL_MTU": "1450"}, false},
		{"", map[string]string{}, false},
		{"FLANNEL_MTU\n", nil, true},
		{"=1450\n", nil, true},
	} {
		got, err := parseSubnetEnv([]byte(c.in))
		if (err != nil) != c.err {
			t.Errorf("%q: error %v, want error %v", c.in, err, c.err)
			continue
		}
		if !c.err && len(got) != len(c.want) {
			t.Errorf("%q: %v, want %v", c.in, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: %s = %q, want %q", c.in, k, got[k], v)
			}
		}
	}
}

func FuzzParseSubnetEnv(f *testing.F) {
	f.Add([]byte("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"))
	f.Add([]byte("FLANNEL_IPV6_NETWORK=fd00::/56\r\nFLANNEL_IPV6_SUBNET=fd00:0:0:1::1/64\r\n"))
	f.Add([]byte("=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseSubnetEnv(data)
		if err != nil {
			return
		}
		for k := range got {
			if k == "" || strings.ContainsAny(k, "\n=") {
				t.Fatalf("key %q from %q", k, data)
			}
		}
	})
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
}
