package discover

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const kubeSystem = metav1.NamespaceSystem

// readVersion reads /version: the first call, so an unreachable server fails here, and so does
// a URL that answers HTTP but is no Kubernetes API server. Every later read takes 404 to mean
// the object is absent, which is only true once the server has shown it is Kubernetes.
func (r *reader) readVersion(ctx context.Context) error {
	var code int
	raw, err := r.cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).StatusCode(&code).Raw()
	switch {
	case err == nil, code == 0, apierrors.IsUnauthorized(err):
		// Success, no answer at all (unreachable) or bad credentials: the caller tells which.
	case code == http.StatusNotFound || apierrors.IsUnexpectedServerError(err):
		// Every kube-apiserver serves /version, and answers errors with a Status object.
		return &NotKubernetesError{Host: r.host, Detail: fmt.Sprintf("GET /version returned %d %s%s", code, http.StatusText(code), bodyExcerpt(raw))}
	}
	if gone, err := r.absent(err, "get", "/version", "", ""); gone {
		return err
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.GitVersion == "" {
		detail := "no gitVersion in its JSON"
		if err != nil {
			detail = "no JSON"
		}
		return &NotKubernetesError{Host: r.host, Detail: fmt.Sprintf("GET /version returned %d but %s%s", code, detail, bodyExcerpt(raw))}
	}
	release, ok := releaseVersion(v.GitVersion)
	if !ok {
		r.note("the API server reports version %q, which is not a Kubernetes release; spec.kubernetesVersion is not taken from it", v.GitVersion)
		return nil
	}
	src := "API server /version"
	if release != v.GitVersion {
		src += fmt.Sprintf(" (%s)", v.GitVersion)
	}
	r.add("spec.kubernetesVersion", rankAPIObject, release, src)
	switch {
	case strings.Contains(v.GitVersion, "-eks-"):
		r.evidence("eks", "API server version %s", v.GitVersion)
	case strings.Contains(v.GitVersion, "-gke."):
		r.evidence("gke", "API server version %s", v.GitVersion)
	}
	return nil
}

// bodyExcerpt quotes the start of a response body for an error message: enough to recognise
// the server that answered (a web server's "404 page not found", an HTML title).
func bodyExcerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " ..."
	}
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return fmt.Sprintf(": %q", s)
}

// releaseVersion turns v1.30.4-eks-a737599 or 1.37.1 into v1.30.4 / v1.37.1; distribution
// suffixes name builds that are not downloadable upstream releases.
func releaseVersion(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] != "1" {
		return "", false
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return "", false
		}
	}
	if parts[1] == "0" && parts[2] == "0" {
		return "", false
	}
	return "v" + s, true
}

// cidrList canonicalises a comma-separated CIDR list and splits it by family.
func cidrList(s string) (v4, v6 []string, err error) {
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%q is not a CIDR", f)
		}
		if p.Addr().Is4() {
			v4 = append(v4, p.Masked().String())
		} else {
			v6 = append(v6, p.Masked().String())
		}
	}
	return v4, v6, nil
}

// addCIDRs adds the IPv4 part of a CIDR list as a candidate; a bad list becomes a note.
func (r *reader) addCIDRs(field string, rank int, list, source string, single bool) {
	v4, v6, err := cidrList(list)
	if err != nil {
		r.note("%s: %v; ignored", source, err)
		return
	}
	if len(v6) > 0 {
		r.note("%s also lists IPv6 %s; kubewin plans IPv4 only", source, strings.Join(v6, ","))
	}
	if len(v4) == 0 {
		return
	}
	if single {
		v4 = v4[:1]
	}
	r.add(field, rank, strings.Join(v4, ","), source)
}

func (r *reader) readServiceCIDRs(ctx context.Context) error {
	opts := metav1.ListOptions{Limit: r.opts.PageSize}
	for {
		list, err := r.cs.NetworkingV1().ServiceCIDRs().List(ctx, opts)
		if gone, err := r.absent(err, "list", "servicecidrs.networking.k8s.io", "", ""); gone {
			return err
		}
		for _, sc := range list.Items {
			src := fmt.Sprintf("ServiceCIDR %s (networking.k8s.io/v1)", sc.Name)
			if sc.Name == "kubernetes" {
				r.addCIDRs("spec.networking.serviceCIDR", rankAPIObject, strings.Join(sc.Spec.CIDRs, ","), src, true)
				continue
			}
			r.note("%s adds service range %s beyond the default one; add it to spec.networking.nodeSubnets so Windows pods reach those Services without NAT",
				src, strings.Join(sc.Spec.CIDRs, ","))
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// getConfigMap reads a ConfigMap; nil when absent or refused (recorded).
func (r *reader) getConfigMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	cm, err := r.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if gone, err := r.absent(err, "get", "configmaps", ns, name); gone {
		return nil, err
	}
	return cm, nil
}

func (r *reader) readKubeadmConfig(ctx context.Context) error {
	cm, err := r.getConfigMap(ctx, kubeSystem, "kubeadm-config")
	if cm == nil {
		return err
	}
	r.evidence("kubeadm", "ConfigMap kube-system/kubeadm-config")
	data, ok := cm.Data["ClusterConfiguration"]
	if !ok {
		r.note("ConfigMap kube-system/kubeadm-config has no ClusterConfiguration key")
		return nil
	}
	kc, err := parseKubeadmClusterConfiguration([]byte(data))
	if err != nil {
		r.note("ConfigMap kube-system/kubeadm-config: %v; ignored", err)
		return nil
	}
	src := func(field string) string {
		return fmt.Sprintf("ConfigMap kube-system/kubeadm-config (ClusterConfiguration %s)", field)
	}
	r.addCIDRs("spec.networking.podCIDRs", rankKubeadm, kc.PodSubnet, src("networking.podSubnet"), false)
	r.addCIDRs("spec.networking.serviceCIDR", rankKubeadm, kc.ServiceSubnet, src("networking.serviceSubnet"), true)
	r.add("spec.networking.clusterDomain", rankKubeadm, strings.TrimSuffix(kc.DNSDomain, "."), src("networking.dnsDomain"))
	if v, ok := releaseVersion(kc.KubernetesVersion); ok {
		r.add("spec.kubernetesVersion", rankKubeadm, v, src("kubernetesVersion"))
	}
	r.add("metadata.name", rankKubeadm, kc.ClusterName, src("clusterName"))
	if ep := kc.ControlPlaneEndpoint; ep != "" {
		// kubeadm accepts a host without a port (the API server's bind port, 6443 unless set,
		// then applies); only host:port is taken.
		if _, port, err := net.SplitHostPort(ep); err == nil && port != "" {
			r.add("spec.networking.apiServerEndpoint", rankKubeadm, ep, src("controlPlaneEndpoint"))
		} else {
			r.note("ConfigMap kube-system/kubeadm-config: controlPlaneEndpoint %q has no port; spec.networking.apiServerEndpoint needs host:port", ep)
		}
	}
	for _, flag := range []string{"node-cidr-mask-size-ipv4", "node-cidr-mask-size"} {
		if v, ok := kc.ControllerManagerArgs[flag]; ok {
			r.addMaskSize(rankKubeadm, v, src("controllerManager.extraArgs "+flag))
			break
		}
	}
	return nil
}

func (r *reader) addMaskSize(rank int, v, source string) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 8 || n > 32 {
		r.note("%s: %q is not an IPv4 mask size; ignored", source, v)
		return
	}
	r.add("spec.networking.nodeCIDRMaskSize", rank, strconv.Itoa(n), source)
}

func (r *reader) readKubeletConfig(ctx context.Context) error {
	cm, err := r.getConfigMap(ctx, kubeSystem, "kubelet-config")
	if cm == nil {
		return err
	}
	data, ok := cm.Data["kubelet"]
	if !ok {
		r.note("ConfigMap kube-system/kubelet-config has no kubelet key")
		return nil
	}
	kc, err := parseKubeletConfiguration([]byte(data))
	if err != nil {
		r.note("ConfigMap kube-system/kubelet-config: %v; ignored", err)
		return nil
	}
	src := func(field string) string {
		return fmt.Sprintf("ConfigMap kube-system/kubelet-config (KubeletConfiguration %s)", field)
	}
	r.add("spec.containerRuntime.cgroupDriver", rankKubeletConfig, kc.CgroupDriver, src("cgroupDriver"))
	r.add("spec.networking.clusterDomain", rankKubeletConfig, strings.TrimSuffix(kc.ClusterDomain, "."), src("clusterDomain"))
	for _, ip := range kc.ClusterDNS {
		a, err := netip.ParseAddr(ip)
		if err != nil || !a.Is4() {
			continue
		}
		if a.IsLinkLocalUnicast() {
			// kubespray's nodelocaldns listens on 169.254.25.10 on every Linux node; Windows nodes
			// cannot run it and must use the DNS Service.
			r.note("%s is %s, a node-local DNS cache; Windows nodes use the DNS Service IP instead", src("clusterDNS"), ip)
			if ip == "169.254.25.10" {
				r.evidence("kubespray", "kubelet clusterDNS 169.254.25.10 (kubespray's nodelocaldns address)")
			}
			break
		}
		r.add("spec.networking.clusterDNS", rankKubeletConfig, a.String(), src("clusterDNS"))
		break
	}
	return nil
}

func (r *reader) readKubeProxyConfig(ctx context.Context) error {
	cm, err := r.getConfigMap(ctx, kubeSystem, "kube-proxy")
	if cm == nil {
		return err
	}
	data, ok := cm.Data["config.conf"]
	if !ok {
		r.note("ConfigMap kube-system/kube-proxy has no config.conf key")
		return nil
	}
	kp, err := parseKubeProxyConfiguration([]byte(data))
	if err != nil {
		r.note("ConfigMap kube-system/kube-proxy: %v; ignored", err)
		return nil
	}
	r.addCIDRs("spec.networking.podCIDRs", rankKubeProxy, kp.ClusterCIDR, "ConfigMap kube-system/kube-proxy (KubeProxyConfiguration clusterCIDR)", false)
	return nil
}

func (r *reader) readControlPlanePods(ctx context.Context) error {
	seen := map[string]bool{}
	// Control-plane static pods: kubeadm labels them component=NAME, kops k8s-app=NAME.
	for _, sel := range []string{
		"component in (kube-apiserver,kube-controller-manager)",
		"k8s-app in (kube-apiserver,kube-controller-manager)",
	} {
		opts := metav1.ListOptions{LabelSelector: sel, Limit: r.opts.PageSize}
		for {
			list, err := r.cs.CoreV1().Pods(kubeSystem).List(ctx, opts)
			if gone, err := r.absent(err, "list", "pods", kubeSystem, ""); gone {
				return err
			}
			for i := range list.Items {
				p := &list.Items[i]
				if seen[p.Name] {
					continue
				}
				seen[p.Name] = true
				r.controlPlanePod(p)
			}
			if list.Continue == "" {
				break
			}
			opts.Continue = list.Continue
		}
	}
	// kube-proxy runs as a static pod on every node under kops (as a DaemonSet under kubeadm,
	// read in readDaemonSets); one pod is a sample of all.
	list, err := r.cs.CoreV1().Pods(kubeSystem).List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-proxy", Limit: 1})
	if gone, err := r.absent(err, "list", "pods", kubeSystem, ""); gone {
		if err != nil {
			return err
		}
	} else if len(list.Items) > 0 && len(list.Items[0].OwnerReferences) == 0 {
		p := &list.Items[0]
		for _, c := range p.Spec.Containers {
			if v, ok := componentArgs("kube-proxy", c.Command, c.Args)["cluster-cidr"]; ok {
				r.addCIDRs("spec.networking.podCIDRs", rankKubeProxyPod, v, fmt.Sprintf("Pod kube-system/%s --cluster-cidr", p.Name), false)
			}
		}
	}
	if len(seen) == 0 {
		r.note("no kube-apiserver or kube-controller-manager pods are visible in kube-system (a managed control plane, or one run outside Kubernetes)")
	}
	return nil
}

func (r *reader) controlPlanePod(p *corev1.Pod) {
	component := p.Labels["component"]
	if component == "" {
		component = p.Labels["k8s-app"]
	}
	for _, c := range p.Spec.Containers {
		flags := componentArgs(component, c.Command, c.Args)
		src := func(flag string) string { return fmt.Sprintf("Pod kube-system/%s --%s", p.Name, flag) }
		switch component {
		case "kube-controller-manager":
			if v, ok := flags["cluster-cidr"]; ok {
				r.addCIDRs("spec.networking.podCIDRs", rankControlPlane, v, src("cluster-cidr"), false)
			}
			if v, ok := flags["service-cluster-ip-range"]; ok {
				r.addCIDRs("spec.networking.serviceCIDR", rankControlPlane, v, src("service-cluster-ip-range"), true)
			}
			for _, f := range []string{"node-cidr-mask-size-ipv4", "node-cidr-mask-size"} {
				if v, ok := flags[f]; ok {
					r.addMaskSize(rankControlPlane, v, src(f))
					break
				}
			}
			if v := flags["cluster-name"]; v != "" && v != "kubernetes" {
				r.add("metadata.name", rankControlPlane, v, src("cluster-name"))
			}
			if flags["allocate-node-cidrs"] == "false" {
				r.note("%s: kube-controller-manager does not allocate node pod CIDRs; Node spec.podCIDR is set by something else", src("allocate-node-cidrs"))
			}
		case "kube-apiserver":
			if v, ok := flags["service-cluster-ip-range"]; ok {
				r.addCIDRs("spec.networking.serviceCIDR", rankControlPlane, v, src("service-cluster-ip-range"), true)
			}
		}
	}
	if p.Labels["k8s-app"] == component && p.Labels["component"] == "" {
		r.evidence("kops", "control-plane pod kube-system/%s labelled k8s-app=%s", p.Name, component)
	}
}

func (r *reader) readServices(ctx context.Context) error {
	svc, err := r.cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if gone, err := r.absent(err, "get", "services", metav1.NamespaceDefault, "kubernetes"); gone {
		if err != nil {
			return err
		}
	} else {
		r.kubernetesServiceIP = svc.Spec.ClusterIP
	}
	for i, name := range []string{"kube-dns", "coredns"} {
		svc, err := r.cs.CoreV1().Services(kubeSystem).Get(ctx, name, metav1.GetOptions{})
		if gone, err := r.absent(err, "get", "services", kubeSystem, name); gone {
			if err != nil {
				return err
			}
			continue
		}
		a, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil || !a.Is4() {
			for _, ip := range svc.Spec.ClusterIPs {
				if b, err := netip.ParseAddr(ip); err == nil && b.Is4() {
					a = b
				}
			}
		}
		if !a.IsValid() || !a.Is4() {
			r.note("Service kube-system/%s has no IPv4 cluster IP (%q)", name, svc.Spec.ClusterIP)
			continue
		}
		r.add("spec.networking.clusterDNS", rankAPIObject+i, a.String(), fmt.Sprintf("Service kube-system/%s clusterIP", name))
		if name == "coredns" {
			r.evidence("kubespray", "DNS Service named kube-system/coredns (kubeadm names it kube-dns)")
		}
	}
	return nil
}

func (r *reader) readCorefile(ctx context.Context) error {
	cm, err := r.getConfigMap(ctx, kubeSystem, "coredns")
	if cm == nil {
		return err
	}
	data, ok := cm.Data["Corefile"]
	if !ok {
		return nil
	}
	zones, err := corefileClusterDomains(data)
	if err != nil {
		r.note("ConfigMap kube-system/coredns Corefile: %v; ignored", err)
		return nil
	}
	if len(zones) == 0 {
		r.note("the Corefile in ConfigMap kube-system/coredns has no kubernetes plugin zone")
		return nil
	}
	r.add("spec.networking.clusterDomain", rankCorefile, zones[0], "ConfigMap kube-system/coredns (Corefile kubernetes plugin zone)")
	if len(zones) > 1 {
		r.note("the CoreDNS kubernetes plugin also serves %s", strings.Join(zones[1:], ", "))
	}
	return nil
}
