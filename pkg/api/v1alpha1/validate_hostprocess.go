package v1alpha1

import (
	"net"
	"strconv"
)

// designRunsFlannel reports whether the design runs flanneld on every node, Windows included.
func designRunsFlannel(d NetworkDesign) bool {
	return flannelBackendOf(d) != "" || d == DesignFlannelHostProcess
}

// hostProcessDesign checks what the CNI-owned Windows designs need from the spec: the CNI they
// are named after, a Windows-capable encapsulation, and the API server endpoint their pods
// reach without the kubernetes Service.
func (v *validator) hostProcessDesign() {
	s := &v.c.Spec
	switch s.Design {
	case DesignCalicoHostProcess:
		if s.LinuxCNI.Type != "calico" {
			v.errs.addf(linuxCNI.Child("type"), "calico",
				"%q: design %s is Calico for Windows, installed by the Tigera operator of a Calico cluster", s.LinuxCNI.Type, s.Design)
			return
		}
		if cs := s.LinuxCNI.Calico; cs != nil && cs.IPIPMode != "" && cs.IPIPMode != "Never" {
			// tigera/operator pkg/controller/installation/validation.go refuses Windows with an
			// IPv4 pool encapsulation other than VXLAN or None; docs.tigera.io Calico for
			// Windows requirements: "Calico CNI with BGP or VXLAN".
			v.errs.addf(linuxCNI.Child("calico").Child("ipipMode"), "Never (BGP without encapsulation) or a VXLAN pool",
				"%q: Calico for Windows has no IP-in-IP; the operator refuses Windows with an IPIP pool", cs.IPIPMode)
		}
		if cs := s.LinuxCNI.Calico; cs != nil && cs.WindowsDataplane != "" {
			v.oneOf(linuxCNI.Child("calico").Child("windowsDataplane"), cs.WindowsDataplane, "HNS", "Disabled")
		}
		if cs := s.LinuxCNI.Calico; cs != nil && cs.BGP != "" {
			v.oneOf(linuxCNI.Child("calico").Child("bgp"), cs.BGP, "Enabled", "Disabled")
		}
	case DesignFlannelHostProcess:
		if f := s.LinuxCNI.Flannel; f != nil && f.Backend == "" {
			v.errs.addf(linuxCNI.Child("flannel").Child("backend"), "host-gw or vxlan, as the cluster's net-conf.json Backend.Type",
				"missing: design %s runs the cluster's own flannel backend on Windows", s.Design)
		}
	}
	for i, ds := range s.Windows.DaemonSets {
		v.oneOf(windows.Child("daemonSets").Index(i).Child("component"), ds.Component, "kube-proxy", "flannel", "calico-node", "other")
	}
	p := networking.Child("apiServerEndpoint")
	ep := s.Networking.APIServerEndpoint
	if ep == "" {
		v.errs.addf(p, "host:port of the API server (kubeadm's controlPlaneEndpoint)",
			"missing: design %s runs kube-proxy in a pod on Windows, which cannot use the kubernetes Service before kube-proxy programs it", s.Design)
		return
	}
	host, port, err := net.SplitHostPort(ep)
	n, perr := strconv.Atoi(port)
	if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		v.errs.addf(p, "host:port, e.g. 10.0.0.10:6443 or api.example.com:6443", "%q is not host:port", ep)
	}
}
