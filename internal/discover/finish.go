package discover

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/kubewin/kubewin/pkg/api/v1alpha1"
)

// set stores a resolved value in the spec. Values were validated when they were added.
func (r *reader) set(path, v string) {
	s := &r.res.Cluster.Spec
	atoi := func() int { n, _ := strconv.Atoi(v); return n }
	calico := func() *v1alpha1.CalicoSettings {
		if s.LinuxCNI.Calico == nil {
			s.LinuxCNI.Calico = &v1alpha1.CalicoSettings{}
		}
		return s.LinuxCNI.Calico
	}
	flannel := func() *v1alpha1.FlannelSettings {
		if s.LinuxCNI.Flannel == nil {
			s.LinuxCNI.Flannel = &v1alpha1.FlannelSettings{}
		}
		return s.LinuxCNI.Flannel
	}
	switch path {
	case "metadata.name":
		r.res.Cluster.Metadata.Name = v
	case "spec.kubernetesVersion":
		s.KubernetesVersion = v
	case "spec.containerRuntime.name":
		s.ContainerRuntime.Name = v
	case "spec.containerRuntime.version":
		s.ContainerRuntime.Version = v
	case "spec.containerRuntime.cgroupDriver":
		s.ContainerRuntime.CgroupDriver = v
	case "spec.networking.podCIDRs":
		s.Networking.PodCIDRs = splitList(v)
	case "spec.networking.serviceCIDR":
		s.Networking.ServiceCIDR = v
	case "spec.networking.nodeCIDRMaskSize":
		s.Networking.NodeCIDRMaskSize = atoi()
	case "spec.networking.clusterDNS":
		s.Networking.ClusterDNS = v
	case "spec.networking.clusterDomain":
		s.Networking.ClusterDomain = v
	case "spec.networking.apiServerEndpoint":
		s.Networking.APIServerEndpoint = v
	case "spec.linuxCNI.calico.strictAffinity":
		b := v == "true"
		calico().StrictAffinity = &b
	case "spec.linuxCNI.calico.windowsDataplane":
		calico().WindowsDataplane = v
	case "spec.linuxCNI.calico.bgp":
		calico().BGP = v
	case "spec.design":
		s.Design = v1alpha1.NetworkDesign(v)
	case "spec.linuxCNI.type":
		s.LinuxCNI.Type = v
	case "spec.linuxCNI.calico.ipPools":
		calico().IPPools = splitList(v)
	case "spec.linuxCNI.calico.ipipMode":
		calico().IPIPMode = v
	case "spec.linuxCNI.calico.blockSize":
		calico().BlockSize = atoi()
	case "spec.linuxCNI.calico.reservation":
		calico().Reservation = v
	case "spec.linuxCNI.flannel.backend":
		flannel().Backend = v
	case "spec.linuxCNI.flannel.vni":
		flannel().VNI = atoi()
	case "spec.linuxCNI.flannel.port":
		flannel().Port = atoi()
	case "spec.windows.taint":
		b := v == "true"
		s.Windows.Taint = &b
	case "spec.linuxCNI.calico.clusterRoutes", "spec.linuxCNI.calico.vxlanMode", "spec.linuxCNI.calico.ignoreLooseRPF":
		r.setCalicoRouting(path, v, calico())
	default:
		// A programming error: TestSetCoversFields checks every added path has a case.
		panic(fmt.Sprintf("discover: no spec field for %q", path))
	}
}

// finish drops CNI settings that do not belong to the CNI found, reports missing values,
// checks addresses against the ranges they must fall in, names how the cluster was made and
// sorts everything for deterministic output.
func (r *reader) finish() {
	s := &r.res.Cluster.Spec
	if s.LinuxCNI.Type != "calico" && s.LinuxCNI.Calico != nil {
		r.note("Calico settings were found but the Linux CNI is %q; they are left out", s.LinuxCNI.Type)
		s.LinuxCNI.Calico = nil
		r.dropProvenance("spec.linuxCNI.calico.")
	}
	if r.res.Cluster.Metadata.Name == "" && r.opts.KubeconfigCluster != "" {
		r.res.Cluster.Metadata.Name = r.opts.KubeconfigCluster
		r.prov("metadata.name", "kubeconfig cluster name")
	}

	need := func(field, supply string, missing bool) {
		if missing {
			r.res.Missing = append(r.res.Missing, Missing{Field: field, Supply: supply})
		}
	}
	need("metadata.name", "a name for the cluster", r.res.Cluster.Metadata.Name == "")
	svcHint := ""
	if r.kubernetesServiceIP != "" {
		svcHint = fmt.Sprintf(" (it contains %s, the kubernetes Service IP)", r.kubernetesServiceIP)
	}
	need("spec.networking.podCIDRs", "the cluster CIDR(s): kube-controller-manager --cluster-cidr", len(s.Networking.PodCIDRs) == 0)
	need("spec.networking.serviceCIDR", "the Service CIDR: kube-apiserver --service-cluster-ip-range"+svcHint, s.Networking.ServiceCIDR == "")
	need("spec.networking.clusterDNS", "the cluster DNS Service IP (kubelet clusterDNS)", s.Networking.ClusterDNS == "")
	need("spec.linuxCNI.type", "the Linux CNI: calico, flannel or other", s.LinuxCNI.Type == "")
	need("spec.design", "how Windows pod networks are reached: upstream-tor/keepalived (also give gatewayGroups), upstream-tor/router (also give torRouter), host-gw, calico/hostprocess (Calico with the Tigera operator) or flannel/hostprocess",
		s.Design == "")

	r.checkRanges()
	r.calicoRoutingNotes()

	r.res.MadeBy = r.chooseMadeBy()
	sort.SliceStable(r.res.Conflicts, func(i, j int) bool { return r.res.Conflicts[i].Field < r.res.Conflicts[j].Field })
	sort.SliceStable(r.res.Missing, func(i, j int) bool { return r.res.Missing[i].Field < r.res.Missing[j].Field })
	sort.SliceStable(r.res.Denied, func(i, j int) bool { return r.res.Denied[i].String() < r.res.Denied[j].String() })
	sort.SliceStable(s.Nodes, func(i, j int) bool { return s.Nodes[i].Name < s.Nodes[j].Name })
	if r.res.Conflicts == nil {
		r.res.Conflicts = []Conflict{}
	}
	if r.res.Missing == nil {
		r.res.Missing = []Missing{}
	}
	if r.res.Denied == nil {
		r.res.Denied = []Denied{}
	}
	if r.res.Notes == nil {
		r.res.Notes = []string{}
	}
	if s.Nodes == nil {
		s.Nodes = []v1alpha1.Node{}
	}
}

func (r *reader) dropProvenance(prefix string) {
	for k := range r.res.Provenance {
		if strings.HasPrefix(k, prefix) {
			delete(r.res.Provenance, k)
		}
	}
}

// checkRanges reports addresses outside the range they belong to as conflicts between the
// sources: the kubernetes and DNS Service IPs must be in the Service CIDR, node pod CIDRs in a
// cluster CIDR.
func (r *reader) checkRanges() {
	s := &r.res.Cluster.Spec
	if svc, err := netip.ParsePrefix(s.Networking.ServiceCIDR); err == nil {
		src := r.res.Provenance["spec.networking.serviceCIDR"].Source
		for _, c := range []struct{ ip, source string }{
			{r.kubernetesServiceIP, "Service default/kubernetes clusterIP"},
			{s.Networking.ClusterDNS, r.res.Provenance["spec.networking.clusterDNS"].Source},
		} {
			a, err := netip.ParseAddr(c.ip)
			if err != nil || svc.Contains(a) {
				continue
			}
			r.res.Conflicts = append(r.res.Conflicts, Conflict{Field: "spec.networking.serviceCIDR", Chosen: svc.String(), Values: []SourcedValue{
				{Value: svc.String(), Source: src},
				{Value: fmt.Sprintf("%s (outside %s)", a, svc), Source: c.source},
			}})
		}
	}
	var pods []netip.Prefix
	for _, c := range s.Networking.PodCIDRs {
		if p, err := netip.ParsePrefix(c); err == nil {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return
	}
	var outside []string
	for _, nc := range r.nodePodCIDRs {
		p, err := netip.ParsePrefix(nc.cidr)
		if err != nil {
			continue
		}
		in := false
		for _, cc := range pods {
			if cc.Bits() <= p.Bits() && cc.Contains(p.Addr()) {
				in = true
			}
		}
		if !in {
			outside = append(outside, fmt.Sprintf("%s %s", nc.node, nc.cidr))
		}
	}
	if len(outside) > 0 {
		sort.Strings(outside)
		r.res.Conflicts = append(r.res.Conflicts, Conflict{Field: "spec.networking.podCIDRs", Chosen: strings.Join(s.Networking.PodCIDRs, ","), Values: []SourcedValue{
			{Value: strings.Join(s.Networking.PodCIDRs, ","), Source: r.res.Provenance["spec.networking.podCIDRs"].Source},
			{Value: fmt.Sprintf("%d node pod CIDRs outside it: %s", len(outside), abbreviate(outside, 10)), Source: "Node spec.podCIDRs"},
		}})
	}
}

// chooseMadeBy names the build tool with the most specific evidence: a managed service over
// kops over kubespray over plain kubeadm. kops on AWS also shows aws:// provider IDs, so
// "aws" alone is only a cloud, not a tool.
func (r *reader) chooseMadeBy() MadeBy {
	for _, tool := range []string{"aks", "eks", "gke", "kops", "kubespray", "kubeadm"} {
		if ev := r.madeBy[tool]; len(ev) > 0 {
			if tool == "kubespray" && len(r.madeBy["kubeadm"]) == 0 {
				// kubespray drives kubeadm; without kubeadm-config these hints are weak.
				continue
			}
			out := MadeBy{Tool: tool, Evidence: append([]string(nil), ev...)}
			if tool == "kubespray" {
				out.Evidence = append(out.Evidence, r.madeBy["kubeadm"]...)
			}
			if tool == "kops" || tool == "eks" {
				out.Evidence = append(out.Evidence, r.madeBy["aws"]...)
			}
			return out
		}
	}
	return MadeBy{Tool: "unknown", Evidence: r.madeBy["aws"]}
}
