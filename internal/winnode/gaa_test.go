package winnode

import (
	"reflect"
	"testing"
)

// The listings below are modelled on what GetAdaptersAddresses with GAA_FLAG_INCLUDE_ALL_INTERFACES
// returns on a node whose NIC "Ethernet" is bound to an external vSwitch (design.md host facts);
// the filter interfaces and miniports are those the sources in gaa.go report. A Windows host
// decides whether they look like this (see the questions in host_windows.go).
func TestAdapterFromGAA(t *testing.T) {
	nicMAC := []byte{0x00, 0x15, 0x5d, 0x01, 0x02, 0x03}
	epMAC := []byte{0x00, 0x15, 0x5d, 0xaa, 0xbb, 0xcc}
	const hw, filter = ifFlagHardwareInterface, ifFlagFilterInterface
	tests := []struct {
		name string
		in   gaaInterface
		want Adapter
		ok   bool
	}{
		{
			name: "NIC with IPv4",
			in: gaaInterface{FriendlyName: "Ethernet", Description: "Amazon Elastic Network Adapter", MAC: nicMAC,
				IfType: ifTypeEthernet, Flags: ipAdapterIPv4Enabled | 0x100, NDISFlags: hw, IPv4: []string{"192.168.7.31"}},
			want: Adapter{Name: "Ethernet", MAC: "00:15:5d:01:02:03", IPv4: []string{"192.168.7.31"}},
			ok:   true,
		},
		{
			name: "NIC bound to an external vSwitch: hardware, IPv4 unbound",
			in: gaaInterface{FriendlyName: "Ethernet", Description: "Amazon Elastic Network Adapter", MAC: nicMAC,
				IfType: ifTypeEthernet, NDISFlags: hw},
			want: Adapter{Name: "Ethernet", MAC: "00:15:5d:01:02:03", Bound: true},
			ok:   true,
		},
		{
			name: "the vSwitch's host vNIC holds the NIC's MAC and address",
			in: gaaInterface{FriendlyName: "vEthernet (Ethernet)", Description: "Hyper-V Virtual Ethernet Adapter", MAC: nicMAC,
				IfType: ifTypeEthernet, Flags: ipAdapterIPv4Enabled, IPv4: []string{"192.168.7.31"}},
			want: Adapter{Name: "vEthernet (Ethernet)", MAC: "00:15:5d:01:02:03", IPv4: []string{"192.168.7.31"}, Virtual: true},
			ok:   true,
		},
		{
			name: "a second vNIC is numbered",
			in: gaaInterface{FriendlyName: "vEthernet (cbr0_ep)", Description: "Hyper-V Virtual Ethernet Adapter #2", MAC: epMAC,
				IfType: ifTypeEthernet, Flags: ipAdapterIPv4Enabled, IPv4: []string{"10.244.3.2"}},
			want: Adapter{Name: "vEthernet (cbr0_ep)", MAC: "00:15:5d:aa:bb:cc", IPv4: []string{"10.244.3.2"}, Virtual: true},
			ok:   true,
		},
		{
			name: "a vNIC without IPv4 is listed but not bound",
			in: gaaInterface{FriendlyName: "vEthernet (x)", Description: "Hyper-V Virtual Ethernet Adapter #3", MAC: epMAC,
				IfType: ifTypeEthernet},
			want: Adapter{Name: "vEthernet (x)", MAC: "00:15:5d:aa:bb:cc", Virtual: true},
			ok:   true,
		},
		{
			name: "filter interface on the NIC: same MAC, no IPv4",
			in: gaaInterface{FriendlyName: "Ethernet-WFP Native MAC Layer LightWeight Filter-0000",
				Description: "Amazon Elastic Network Adapter-WFP Native MAC Layer LightWeight Filter-0000", MAC: nicMAC,
				IfType: ifTypeEthernet, NDISFlags: hw | filter},
		},
		{
			name: "filter interface on the vNIC",
			in: gaaInterface{FriendlyName: "vEthernet (Ethernet)-QoS Packet Scheduler-0000",
				Description: "Hyper-V Virtual Ethernet Adapter-QoS Packet Scheduler-0000", MAC: nicMAC,
				IfType: ifTypeEthernet, NDISFlags: filter},
		},
		{
			name: "vSwitch extension adapter: software, no IPv4",
			in: gaaInterface{FriendlyName: "Local Area Connection* 1", Description: "Hyper-V Virtual Switch Extension Adapter", MAC: nicMAC,
				IfType: ifTypeEthernet},
		},
		{
			name: "WAN miniport: software, no IPv4",
			in: gaaInterface{FriendlyName: "Local Area Connection* 3", Description: "WAN Miniport (IP)", MAC: []byte{0x22, 0x11, 0, 0, 0, 1},
				IfType: ifTypeEthernet},
		},
		{
			name: "loopback",
			in: gaaInterface{FriendlyName: "Loopback Pseudo-Interface 1", Description: "Software Loopback Interface 1",
				IfType: ifTypeSoftwareLoopback, Flags: ipAdapterIPv4Enabled, IPv4: []string{"127.0.0.1"}},
		},
		{
			name: "tunnel with a 6-byte address",
			in: gaaInterface{FriendlyName: "Teredo", Description: "Teredo Tunneling Pseudo-Interface", MAC: nicMAC,
				IfType: ifTypeTunnel, NDISFlags: hw},
		},
		{
			name: "no MAC",
			in:   gaaInterface{FriendlyName: "x", IfType: ifTypeEthernet, Flags: ipAdapterIPv4Enabled, IPv4: []string{"10.0.0.1"}},
		},
		{
			name: "8-byte address",
			in: gaaInterface{FriendlyName: "x", MAC: []byte{1, 2, 3, 4, 5, 6, 7, 8}, IfType: ifTypeEthernet,
				Flags: ipAdapterIPv4Enabled},
		},
		{
			name: "all-zero MAC",
			in:   gaaInterface{FriendlyName: "x", MAC: make([]byte, 6), IfType: ifTypeEthernet, Flags: ipAdapterIPv4Enabled},
		},
		{
			name: "hardware NIC of another type without IPv4 is not a vSwitch's NIC",
			in:   gaaInterface{FriendlyName: "Mobile", MAC: nicMAC, IfType: 243, NDISFlags: hw},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := adapterFromGAA(tt.in)
			if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("adapterFromGAA = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestAdapterFromGAADoesNotAlias(t *testing.T) {
	in := gaaInterface{FriendlyName: "Ethernet", MAC: []byte{0, 0x15, 0x5d, 1, 2, 3}, IfType: ifTypeEthernet,
		Flags: ipAdapterIPv4Enabled, IPv4: []string{"10.0.0.1"}}
	a, _ := adapterFromGAA(in)
	in.IPv4[0] = "10.0.0.2"
	if a.IPv4[0] != "10.0.0.1" {
		t.Errorf("the Adapter shares the listing's address slice: %v", a.IPv4)
	}
}

func TestHostIPv4Set(t *testing.T) {
	set := hostIPv4Set([]Adapter{
		{Name: "Ethernet", Bound: true},
		{Name: "vEthernet (Ethernet)", IPv4: []string{"192.168.7.31"}, Virtual: true},
		{Name: "vEthernet (cbr0_ep)", IPv4: []string{"10.244.3.2", "169.254.1.5"}, Virtual: true},
	})
	for _, ip := range []string{"192.168.7.31", "10.244.3.2", "169.254.1.5"} {
		if !heldByHost(set, ip) {
			t.Errorf("%s is on a host interface; heldByHost says no (set %v)", ip, set)
		}
	}
	for _, ip := range []string{"10.244.3.3", "", "not-an-ip", "::1"} {
		if heldByHost(set, ip) {
			t.Errorf("%q is on no host interface; heldByHost says yes", ip)
		}
	}
	if len(set) != 3 {
		t.Errorf("hostIPv4Set has %d addresses, want 3: %v", len(set), set)
	}
}
