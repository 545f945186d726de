package gateway

import (
	"bytes"
	"fmt"
	"path"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/kubewin/kubewin/internal/plan"
)

// ManifestOptions tune the deployment of a gateway group.
type ManifestOptions struct {
	// Namespace for the DaemonSets, ConfigMaps and RBAC (default kubewin-system).
	Namespace string
	// Image runs every container: it must hold kubewin (on $PATH), keepalived 2.x and chrt.
	Image string
	// MetricsPort and RoutesMetricsPort are host ports (the pods use the host network); give
	// every group on a node its own (defaults 9477 and 9478).
	MetricsPort       int
	RoutesMetricsPort int
	// KeepalivedRTPriority is the SCHED_RR priority keepalived runs with (default 10): a busy
	// node must not delay adverts past the peers' down timer (3 adverts + skew). Where the
	// kernel refuses real-time scheduling keepalived runs at nice -20 (ExecRealtime).
	KeepalivedRTPriority int
}

func (o *ManifestOptions) defaults() {
	if o.Namespace == "" {
		o.Namespace = "kubewin-system"
	}
	if o.MetricsPort == 0 {
		o.MetricsPort = 9477
	}
	if o.RoutesMetricsPort == 0 {
		o.RoutesMetricsPort = 9478
	}
	if o.KeepalivedRTPriority == 0 {
		o.KeepalivedRTPriority = 10
	}
}

// Paths inside the gateway pods.
const (
	configDir      = "/etc/kubewin/gateway"
	keepalivedDir  = "/etc/keepalived"
	keepalivedRun  = "/run/keepalived"
	hostStateDir   = "/var/lib/kubewin/gateway"
	routesNeeded   = "routes"
	managedByLabel = "app.kubernetes.io/managed-by"
)

// ManifestsFromPlan renders the deployment of gateway group name of a plan (what `kubewin
// plan` writes beside the node files).
func ManifestsFromPlan(p plan.Plan, name string, o ManifestOptions) ([]byte, error) {
	cfg, err := GroupConfigFromPlan(p, name)
	if err != nil {
		return nil, err
	}
	return Manifests(cfg, o)
}

// Manifests renders plain YAML that deploys gateway group cfg: the namespace, least-privilege
// RBAC, the group's configuration and per-member status ConfigMaps, the gateway DaemonSet on
// the members (init: install the configuration once; keepalived; kubewin gateway) and, when the
// group has router VIPs, the route keeper DaemonSet on every Linux node. Same input, same bytes.
//
// RBAC: both DaemonSets may get/list/watch Nodes (the only cluster-wide grant; a watch cannot be
// narrowed to Windows nodes by RBAC). The gateway may get/update/patch only its members' status
// ConfigMaps (resourceNames, pre-created here, so it needs no create) and, for the Calico
// reservation (CalicoReserver), list Calico IP pools and IPAM blocks, create IPReservations and
// get/update/delete only CalicoReservationName; nothing else. The route keeper writes nothing.
func Manifests(cfg GroupConfig, o ManifestOptions) ([]byte, error) {
	o.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway manifests: %w", err)
	}
	if o.Image == "" {
		return nil, fmt.Errorf("gateway manifests for group %s: no image (it must contain kubewin, keepalived and chrt)", cfg.Name)
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("gateway manifests: namespace %q: %v", o.Namespace, errs)
	}
	base := "kubewin-gateway-" + cfg.Name
	if errs := validation.IsDNS1123Label(base + "-routes"); len(errs) > 0 {
		return nil, fmt.Errorf("gateway manifests: group name %q does not make valid object names: %v", cfg.Name, errs)
	}
	for _, m := range cfg.Members {
		if errs := validation.IsDNS1123Subdomain(StatusName(cfg.Name, m.Node)); len(errs) > 0 {
			return nil, fmt.Errorf("gateway manifests: status object of member %s: %v", m.Node, errs)
		}
	}
	for _, p := range []int{o.MetricsPort, o.RoutesMetricsPort} {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("gateway manifests: port %d outside 1-65535", p)
		}
	}
	if o.KeepalivedRTPriority < 1 || o.KeepalivedRTPriority > 99 {
		return nil, fmt.Errorf("gateway manifests: keepalived real-time priority %d outside 1-99", o.KeepalivedRTPriority)
	}
	cfgJSON, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	members := make([]string, 0, len(cfg.Members))
	for _, m := range cfg.Members {
		members = append(members, m.Node)
	}
	sort.Strings(members)
	statusNames := make([]string, len(members))
	for i, m := range members {
		statusNames[i] = StatusName(cfg.Name, m)
	}
	labels := func(component string) map[string]string {
		return map[string]string{
			"app.kubernetes.io/name":      "kubewin-gateway",
			"app.kubernetes.io/component": component,
			StatusLabelGroup:              cfg.Name,
			managedByLabel:                "kubewin",
		}
	}
	ns := o.Namespace
	meta := func(name, component string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels(component)}
	}
	clusterMeta := func(name, component string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: labels(component)}
	}
	withRoutes := len(cfg.RouterVIPs) > 0 || cfg.RouterVIPsRequired

	objs := []runtime.Object{
		&corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			// Host network, NET_ADMIN and real-time scheduling are the privileged profile.
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged", managedByLabel: "kubewin"}},
		},
		&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(base, "gateway")},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: clusterMeta(base+"-node-reader", "gateway"),
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: clusterMeta(base+"-node-reader", "gateway"),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: base + "-node-reader"},
			Subjects:   nodeReaders(base, ns, withRoutes),
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: clusterMeta(base+"-calico-reservation", "gateway"),
			Rules:      calicoReservationRules(),
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: clusterMeta(base+"-calico-reservation", "gateway"),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: base + "-calico-reservation"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: base, Namespace: ns}},
		},
		&rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta(base+"-status", "gateway"),
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: statusNames, Verbs: []string{"get", "update", "patch"}}},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta(base+"-status", "gateway"),
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: base + "-status"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: base, Namespace: ns}},
		},
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta(base, "config"),
			Data:       map[string]string{cfg.Name + ".json": string(cfgJSON)},
		},
	}
	for _, m := range members {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(StatusName(cfg.Name, m), "status")}
		for k, v := range statusLabels(cfg.Name, m) {
			cm.Labels[k] = v
		}
		objs = append(objs, cm)
	}
	objs = append(objs, gatewayDaemonSet(cfg, o, base, members, labels("gateway")))
	if withRoutes {
		objs = append(objs,
			&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(base+"-"+routesNeeded, routesNeeded)},
			routesDaemonSet(cfg, o, base, labels(routesNeeded)))
	}

	var out bytes.Buffer
	fmt.Fprintf(&out, "# Gateway group %s: generated by kubewin; apply with kubectl apply -f.\n", cfg.Name)
	for _, obj := range objs {
		b, err := marshalClean(obj)
		if err != nil {
			return nil, fmt.Errorf("gateway manifests for group %s: %w", cfg.Name, err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return out.Bytes(), nil
}

// calicoReservationRules are what CalicoReserver needs, in both groups Calico may use (see
// calicoAPIFor). create cannot be narrowed to one name (RBAC checks resourceNames only for
// requests that name an object: kubernetes.io/docs/reference/access-authn-authz/rbac, "Referring
// to resources"); every other write is limited to CalicoReservationName.
func calicoReservationRules() []rbacv1.PolicyRule {
	groups := []string{calicoV1.Group, calicoV3.Group}
	return []rbacv1.PolicyRule{
		{APIGroups: groups, Resources: []string{"ipamblocks", "ippools"}, Verbs: []string{"list"}},
		{APIGroups: groups, Resources: []string{"ipreservations"}, Verbs: []string{"create"}},
		{APIGroups: groups, Resources: []string{"ipreservations"}, ResourceNames: []string{CalicoReservationName}, Verbs: []string{"delete", "get", "update"}},
	}
}

func nodeReaders(base, ns string, withRoutes bool) []rbacv1.Subject {
	s := []rbacv1.Subject{{Kind: "ServiceAccount", Name: base, Namespace: ns}}
	if withRoutes {
		s = append(s, rbacv1.Subject{Kind: "ServiceAccount", Name: base + "-" + routesNeeded, Namespace: ns})
	}
	return s
}

func gatewayDaemonSet(cfg GroupConfig, o ManifestOptions, base string, members []string, labels map[string]string) *appsv1.DaemonSet {
	confDir := path.Join(keepalivedDir, cfg.Name)
	runDir := path.Join(keepalivedRun, cfg.Name)
	confPath := path.Join(confDir, "keepalived.conf")
	pidFile := path.Join(runDir, "keepalived.pid")
	groupFile := path.Join(configDir, cfg.Name+".json")
	gatewayArgs := []string{"gateway", "--group", cfg.Name, "--config", groupFile,
		"--keepalived-config", confPath, "--keepalived-pidfile", pidFile,
		"--status-namespace", o.Namespace, "--metrics-address", fmt.Sprintf(":%d", o.MetricsPort), "--log-format", "json"}
	mounts := []corev1.VolumeMount{
		{Name: "group-config", MountPath: configDir, ReadOnly: true},
		{Name: "keepalived-config", MountPath: confDir},
		{Name: "keepalived-run", MountPath: runDir},
	}
	nodeName := []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}
	noEscalation, yes := false, true
	root := int64(0)
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: base, Namespace: o.Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				// One member at a time: the others keep holding the VIPs.
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptrIntOrString(intstr.FromInt32(1))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: base,
					HostNetwork:        true,
					DNSPolicy:          corev1.DNSClusterFirstWithHostNet,
					// kubewin gateway signals keepalived (SIGHUP) by pid.
					ShareProcessNamespace: &yes,
					PriorityClassName:     "system-node-critical",
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: memberTerms(members)},
					}},
					// Members are often control-plane nodes (seed 000 uses the masters).
					Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					InitContainers: []corev1.Container{{
						Name:    "install-config",
						Image:   o.Image,
						Command: []string{"kubewin"},
						// keepalived starts on a current file; with the API unreachable an
						// existing file from the host directory is kept.
						Args: []string{"gateway", "--group", cfg.Name, "--config", groupFile, "--keepalived-config", confPath,
							"--once", "--once-timeout", "2m", "--status-namespace", "", "--log-format", "json"},
						Env:             nodeName,
						VolumeMounts:    mounts,
						SecurityContext: &corev1.SecurityContext{RunAsUser: &root, AllowPrivilegeEscalation: &noEscalation, ReadOnlyRootFilesystem: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
					Containers: []corev1.Container{
						{
							Name:  "keepalived",
							Image: o.Image,
							// -G: no syslog (glibc would fall back to /dev/console and block).
							// kubewin gateway exec: SCHED_RR for keepalived, or nice -20 where the
							// kernel refuses it (a cgroup-v1 pod cgroup without real-time budget,
							// where chrt would fail and the container crash-loop); ExecRealtime.
							Command: []string{"kubewin", "gateway", "exec", "--rt-priority", fmt.Sprint(o.KeepalivedRTPriority), "--", "keepalived"},
							Args:    []string{"--vrrp", "--dont-fork", "--log-console", "--no-syslog", "-f", confPath, "-p", pidFile, "-r", path.Join(runDir, "vrrp.pid")},
							VolumeMounts: []corev1.VolumeMount{
								{Name: "keepalived-config", MountPath: confDir, ReadOnly: true},
								{Name: "keepalived-run", MountPath: runDir},
							},
							Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("32Mi")}},
							SecurityContext: &corev1.SecurityContext{
								RunAsUser: &root, AllowPrivilegeEscalation: &noEscalation, ReadOnlyRootFilesystem: &yes,
								// Addresses (NET_ADMIN), VRRP and ARP raw sockets (NET_RAW),
								// real-time scheduling (SYS_NICE); nothing else.
								Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN", "NET_RAW", "SYS_NICE"}},
							},
						},
						{
							Name:         "gateway",
							Image:        o.Image,
							Command:      []string{"kubewin"},
							Args:         gatewayArgs,
							Env:          nodeName,
							VolumeMounts: mounts,
							Ports:        []corev1.ContainerPort{{Name: "metrics", ContainerPort: int32(o.MetricsPort), Protocol: corev1.ProtocolTCP}},
							LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(int32(o.MetricsPort))}},
								PeriodSeconds: 20, FailureThreshold: 3},
							Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
							// Reads addresses with netlink and signals keepalived (same user):
							// no capabilities.
							SecurityContext: &corev1.SecurityContext{RunAsUser: &root, AllowPrivilegeEscalation: &noEscalation, ReadOnlyRootFilesystem: &yes, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						},
					},
					Volumes: []corev1.Volume{
						{Name: "group-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: base}}}},
						// On the host, so a restarted pod finds the last configuration even when
						// the API server is unreachable (fail-static across restarts).
						{Name: "keepalived-config", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path.Join(hostStateDir, cfg.Name), Type: &dirOrCreate}}},
						{Name: "keepalived-run", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
					},
				},
			},
		},
	}
}

func routesDaemonSet(cfg GroupConfig, o ManifestOptions, base string, labels map[string]string) *appsv1.DaemonSet {
	noEscalation, yes := false, true
	root := int64(0)
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: base + "-" + routesNeeded, Namespace: o.Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: base + "-" + routesNeeded,
					HostNetwork:        true,
					DNSPolicy:          corev1.DNSClusterFirstWithHostNet,
					PriorityClassName:  "system-node-critical",
					NodeSelector:       map[string]string{"kubernetes.io/os": "linux"},
					Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:    "routes",
						Image:   o.Image,
						Command: []string{"kubewin"},
						Args: []string{"gateway", "routes", "--group", cfg.Name, "--config", path.Join(configDir, cfg.Name+".json"),
							"--metrics-address", fmt.Sprintf(":%d", o.RoutesMetricsPort), "--log-format", "json"},
						Env:          []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "group-config", MountPath: configDir, ReadOnly: true}},
						Ports:        []corev1.ContainerPort{{Name: "metrics", ContainerPort: int32(o.RoutesMetricsPort), Protocol: corev1.ProtocolTCP}},
						LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(int32(o.RoutesMetricsPort))}},
							PeriodSeconds: 20, FailureThreshold: 3},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("48Mi")}},
						SecurityContext: &corev1.SecurityContext{RunAsUser: &root, AllowPrivilegeEscalation: &noEscalation, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN"}}},
					}},
					Volumes: []corev1.Volume{{Name: "group-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: base}}}}},
				},
			},
		},
	}
}

// memberTerms selects the members by name: one term per node (terms are ORed), because a
// metadata.name field selector takes exactly one value.
func memberTerms(members []string) []corev1.NodeSelectorTerm {
	out := make([]corev1.NodeSelectorTerm, len(members))
	for i, m := range members {
		out[i] = corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{m}}}}
	}
	return out
}

func ptrIntOrString(v intstr.IntOrString) *intstr.IntOrString { return &v }

// marshalClean renders obj as YAML without the empty status and null creationTimestamps that
// typed objects carry.
func marshalClean(obj runtime.Object) ([]byte, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T: %w", obj, err)
	}
	unstructured.RemoveNestedField(u, "status")
	if spec, ok := u["spec"].(map[string]any); ok && len(spec) == 0 {
		delete(u, "spec")
	}
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u, "spec", "template", "metadata", "creationTimestamp")
	b, err := yaml.Marshal(u)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", obj, err)
	}
	return b, nil
}
