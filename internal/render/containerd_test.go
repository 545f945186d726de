package render

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	runhcsoptions "github.com/Microsoft/hcsshim/cmd/containerd-shim-runhcs-v1/options"
	runcoptions "github.com/containerd/containerd/api/types/runc/options"
	"github.com/containerd/platforms"
	"github.com/pelletier/go-toml/v2"
)

// ctrdConfig mirrors the parts of containerd 2.x's configuration kubewin writes, with the TOML
// keys of containerd's own types (cmd/containerd/server/config and internal/cri/config, which
// is internal to containerd and cannot be imported). Decoding is strict: a key containerd does
// not know under these tables fails the test instead of being silently ignored by containerd.
// Debian's containerd (1.6) reads only configuration version 2, so the real program cannot
// check a version 3 file here.
type ctrdConfig struct {
	Version int    `toml:"version"`
	Root    string `toml:"root"`
	State   string `toml:"state"`
	GRPC    *struct {
		Address string `toml:"address"`
	} `toml:"grpc"`
	Plugins struct {
		Images  *ctrdImages  `toml:"io.containerd.cri.v1.images"`
		Runtime *ctrdRuntime `toml:"io.containerd.cri.v1.runtime"`
	} `toml:"plugins"`
}

type ctrdImages struct {
	// containerd 2.x internal/cri/config ImageConfig.ImagePullProgressTimeout.
	ImagePullProgressTimeout string            `toml:"image_pull_progress_timeout"`
	PinnedImages             map[string]string `toml:"pinned_images"`
	Registry                 struct {
		ConfigPath string `toml:"config_path"`
	} `toml:"registry"`
	RuntimePlatforms map[string]struct {
		Platform    string `toml:"platform"`
		Snapshotter string `toml:"snapshotter"`
	} `toml:"runtime_platforms"`
}

type ctrdRuntime struct {
	CNI struct {
		BinDirs    []string `toml:"bin_dirs"`
		ConfDir    string   `toml:"conf_dir"`
		MaxConfNum int      `toml:"max_conf_num"`
	} `toml:"cni"`
	Containerd struct {
		DefaultRuntimeName string `toml:"default_runtime_name"`
		Runtimes           map[string]struct {
			RuntimeType string         `toml:"runtime_type"`
			Options     map[string]any `toml:"options"`
		} `toml:"runtimes"`
	} `toml:"containerd"`
}

func decodeContainerd(t *testing.T, data []byte) ctrdConfig {
	t.Helper()
	var c ctrdConfig
	d := toml.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		t.Fatalf("containerd config: %v\n%s", err, data)
	}
	if c.Version != 3 {
		t.Errorf("version %d, want 3", c.Version)
	}
	rt := c.Plugins.Runtime
	if rt == nil || c.Plugins.Images == nil {
		t.Fatalf("CRI plugin sections missing:\n%s", data)
	}
	// containerd's ValidateRuntimeConfig: the default runtime must be configured.
	if _, ok := rt.Containerd.Runtimes[rt.Containerd.DefaultRuntimeName]; !ok {
		t.Errorf("default_runtime_name %q has no runtime", rt.Containerd.DefaultRuntimeName)
	}
	return c
}

// runtimeOptions converts a runtime's options table the way containerd does (TOML marshal, then
// unmarshal into the shim's option type), but strictly.
func runtimeOptions(t *testing.T, opts map[string]any, into any) {
	t.Helper()
	b, err := toml.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	d := toml.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(into); err != nil {
		t.Fatalf("runtime options %v into %T: %v", opts, into, err)
	}
}

func TestWindowsContainerdConfig(t *testing.T) {
	for name, p := range designVariants(t) {
		for _, n := range windowsNodes(p) {
			t.Run(name+"/"+n.Name, func(t *testing.T) {
				data, err := WindowsContainerdConfig(p, n)
				if err != nil {
					t.Fatal(err)
				}
				c := decodeContainerd(t, data)
				w := n.Windows
				if c.GRPC == nil || w.ContainerdPipe != "npipe://"+strings.ReplaceAll(c.GRPC.Address, `\`, "/") {
					t.Errorf("grpc address %+v does not serve %s", c.GRPC, w.ContainerdPipe)
				}
				if c.Plugins.Images.PinnedImages["sandbox"] != w.PauseImage {
					t.Errorf("sandbox image %q, want %q", c.Plugins.Images.PinnedImages["sandbox"], w.PauseImage)
				}
				cni := c.Plugins.Runtime.CNI
				if len(cni.BinDirs) != 1 || cni.BinDirs[0] != w.CNIBinDir || cni.ConfDir != w.CNIConfDir {
					t.Errorf("cni %+v, want %s %s", cni, w.CNIBinDir, w.CNIConfDir)
				}
				rts := c.Plugins.Runtime.Containerd.Runtimes
				if len(rts) != len(w.RuntimeHandlers) {
					t.Errorf("%d runtimes, want %d", len(rts), len(w.RuntimeHandlers))
				}
				for _, h := range w.RuntimeHandlers {
					r, ok := rts[h.Name]
					if !ok || r.RuntimeType != "io.containerd.runhcs.v1" {
						t.Errorf("handler %s: %+v", h.Name, r)
						continue
					}
					var o runhcsoptions.Options
					runtimeOptions(t, r.Options, &o)
					wantIso := runhcsoptions.Options_PROCESS
					if h.Isolation == "hyperv" {
						wantIso = runhcsoptions.Options_HYPERVISOR
						rp, ok := c.Plugins.Images.RuntimePlatforms[h.Name]
						if !ok {
							t.Errorf("handler %s has no runtime platform", h.Name)
						}
						pl, err := platforms.Parse(rp.Platform)
						if err != nil || pl.OS != "windows" || !strings.HasSuffix(pl.OSVersion, "."+strconv.Itoa(h.ImageBuild)) {
							t.Errorf("handler %s platform %q -> %+v, %v", h.Name, rp.Platform, pl, err)
						}
					}
					if o.SandboxIsolation != wantIso {
						t.Errorf("handler %s isolation %v, want %v", h.Name, o.SandboxIsolation, wantIso)
					}
				}
				if len(p.Images.InsecureRegistries) > 0 && c.Plugins.Images.Registry.ConfigPath == "" {
					t.Error("insecure registries without certs.d config_path")
				}
			})
		}
	}
}

func TestLinuxContainerdConfigCgroupDriver(t *testing.T) {
	p := examplePlan(t)
	for _, driver := range []string{"systemd", "cgroupfs"} {
		for _, n := range p.Nodes {
			if n.Linux == nil {
				continue
			}
			l := *n.Linux
			l.CgroupDriver = driver
			n.Linux = &l
			data, err := LinuxContainerdConfig(p, n)
			if err != nil {
				t.Fatal(err)
			}
			c := decodeContainerd(t, data)
			var o runcoptions.Options
			runtimeOptions(t, c.Plugins.Runtime.Containerd.Runtimes["runc"].Options, &o)
			if o.SystemdCgroup != (driver == "systemd") {
				t.Errorf("%s with cgroupDriver %s: SystemdCgroup=%v", n.Name, driver, o.SystemdCgroup)
			}
			if c.Plugins.Images.PinnedImages["sandbox"] != p.Images.LinuxPause {
				t.Errorf("sandbox %q", c.Plugins.Images.PinnedImages["sandbox"])
			}
		}
	}
	n := p.Nodes[0]
	l := *n.Linux
	l.CgroupDriver = "cgroupfs2"
	n.Linux = &l
	if _, err := LinuxContainerdConfig(p, n); err == nil {
		t.Error("unknown cgroup driver accepted")
	}
}

func TestRegistryHosts(t *testing.T) {
	files := mustRender(t, examplePlan(t))
	for _, host := range []string{"repo.mylan.k8s:8888", "repo.mylan.k8s:9999"} {
		dir := RegistryHostDir(host)
		if strings.Contains(dir, ":") {
			t.Errorf("%s: %q is not a valid Windows directory name", host, dir)
		}
		for _, node := range []string{"node009", "node001"} {
			data, ok := files["nodes/"+node+"/containerd/certs.d/"+dir+"/hosts.toml"]
			if !ok {
				t.Errorf("%s: no hosts.toml for %s", node, host)
				continue
			}
			var h struct {
				Server string `toml:"server"`
				Host   map[string]struct {
					Capabilities []string `toml:"capabilities"`
				} `toml:"host"`
			}
			d := toml.NewDecoder(bytes.NewReader(data))
			d.DisallowUnknownFields()
			if err := d.Decode(&h); err != nil {
				t.Fatalf("hosts.toml: %v", err)
			}
			if h.Server != "http://"+host || len(h.Host["http://"+host].Capabilities) != 2 {
				t.Errorf("hosts.toml for %s: %+v", host, h)
			}
		}
	}
	if _, err := RegistryHostsTOML("bad host"); err == nil {
		t.Error("a host with a space was accepted")
	}
}
