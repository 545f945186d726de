//go:build linux

package gateway

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestGroupConfigRoundTrip(t *testing.T) {
	cfg := testConfig()
	b, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseGroupConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cfg) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, cfg)
	}
}

func TestParseGroupConfigErrors(t *testing.T) {
	valid, err := testConfig().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(from, to string) string {
		if !strings.Contains(string(valid), from) {
			t.Fatalf("fixture has no %q", from)
		}
		return strings.Replace(string(valid), from, to, 1)
	}
	tests := []struct{ name, in, want string }{
		{"empty", "", "empty gateway group config"},
		{"syntax", "{\n\"name\": }", "line 2: invalid JSON"},
		{"unknown field", edit(`"name": "wingw"`, `"name": "wingw", "nmae": 1`), `unknown field "nmae"`},
		{"wrong type", edit(`"vrrpVersion": 3`, `"vrrpVersion": "3"`), "field vrrpVersion: expected int"},
		{"trailing data", string(valid) + "{}", "unexpected data after"},
		{"kind", edit(ConfigKind, "Cluster"), "apiVersion/kind"},
		{"one member", edit(`    {
      "node": "gw2",`, `    {"x": 1},
    {
      "node": "gw2",`), "unknown field"},
		{"version", edit(`"vrrpVersion": 3`, `"vrrpVersion": 4`), "vrrpVersion: expected 2 or 3"},
		{"vrid range", edit(`"vridRange": [
    100,
    101
  ]`, `"vridRange": [300, 1]`), "vridRange"},
		{"256 per instance", edit(`"vipsPerInstance": 4`, `"vipsPerInstance": 256`), "vipsPerInstance: expected 1-255"},
		{"bad CIDR", edit(`"10.128.0.0/16"`, `"10.128.0.0/33"`), "clusterCIDRs[0]"},
		{"bad member IP", edit(`"192.168.50.11"`, `"gw1.example"`), "members[0].ip"},
		{"bad selector", edit(`"windowsNodeSelector": "kubernetes.io/os=windows"`, `"windowsNodeSelector": "a in (b"`), "windowsNodeSelector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGroupConfig([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// A full instance with its router VIP is fine: only one address goes into the advert, the
	// rest are excluded addresses (render.KeepalivedConfig, accepted by keepalived -t).
	if _, err := ParseGroupConfig([]byte(edit(`"vipsPerInstance": 4`, `"vipsPerInstance": 255`))); err != nil {
		t.Errorf("255 VIPs per instance with router VIPs: %v", err)
	}
	// LoadGroupConfig names the file.
	p := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadGroupConfig(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("LoadGroupConfig error %v does not name the file", err)
	}
}

// FuzzParseGroupConfig: the parser never panics, and what it accepts round-trips.
func FuzzParseGroupConfig(f *testing.F) {
	valid, err := testConfig().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"apiVersion":"kubewin.io/v1alpha1","kind":"GatewayGroupConfig"}`))
	f.Add([]byte(`{"members":[{"node":"a","ip":"1.2.3.4"}],"vridRange":[1]}`))
	f.Add([]byte(`[]`))
	f.Add([]byte("\x00{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseGroupConfig(data)
		if err != nil {
			return
		}
		b, err := c.Marshal()
		if err != nil {
			t.Fatalf("accepted config does not marshal: %v", err)
		}
		if _, err := ParseGroupConfig(b); err != nil {
			t.Fatalf("accepted config does not round-trip: %v\n%s", err, b)
		}
	})
}

func TestInstallConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keepalived.conf")
	calls := 0
	ok := func(context.Context, string) error { calls++; return nil }
	changed, _, err := installConfig(context.Background(), path, []byte("a\n"), ok)
	if err != nil || !changed || calls != 1 {
		t.Fatalf("first install: changed=%v err=%v validations=%d", changed, err, calls)
	}
	changed, _, err = installConfig(context.Background(), path, []byte("a\n"), ok)
	if err != nil || changed || calls != 1 {
		t.Fatalf("same bytes: changed=%v err=%v validations=%d; want no write and no validation", changed, err, calls)
	}
	reject := func(_ context.Context, p string) error {
		if b, _ := os.ReadFile(p); string(b) != "b\n" {
			t.Errorf("validator saw %q, want the candidate", b)
		}
		return errors.New("keepalived -t: bad")
	}
	changed, stage, err := installConfig(context.Background(), path, []byte("b\n"), reject)
	if err == nil || stage != "validate" || changed {
		t.Fatalf("rejected candidate: changed=%v stage=%q err=%v", changed, stage, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "a\n" {
		t.Fatalf("installed file changed to %q after a rejected candidate", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left files behind: %v", entries)
	}
}
