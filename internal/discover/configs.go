package discover

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeadmscheme "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm/scheme"
	"sigs.k8s.io/yaml"
)

// kubeadmFacts are the ClusterConfiguration values discovery uses.
type kubeadmFacts struct {
	APIVersion            string
	KubernetesVersion     string
	ClusterName           string
	PodSubnet             string
	ServiceSubnet         string
	DNSDomain             string
	ControlPlaneEndpoint  string
	ControllerManagerArgs map[string]string
}

// parseKubeadmClusterConfiguration decodes the ClusterConfiguration of the kubeadm-config
// ConfigMap with kubeadm's own scheme (kubeadm.k8s.io/v1beta4 and v1), without defaulting so
// that an absent field stays absent. Clusters created by older kubeadm releases keep
// v1beta3 (or older) until their next upgrade; kubeadm no longer ships those types, so the few
// fields used here, which have the same names in every version, are read directly.
func parseKubeadmClusterConfiguration(data []byte) (*kubeadmFacts, error) {
	obj, gvk, err := kubeadmscheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			return parseLegacyKubeadm(data)
		}
		return nil, fmt.Errorf("decode ClusterConfiguration: %w", err)
	}
	var internal kubeadmapi.ClusterConfiguration
	if err := kubeadmscheme.Scheme.Convert(obj, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert %s to ClusterConfiguration: %w", gvk, err)
	}
	f := &kubeadmFacts{
		APIVersion:            gvk.GroupVersion().String(),
		KubernetesVersion:     internal.KubernetesVersion,
		ClusterName:           internal.ClusterName,
		PodSubnet:             internal.Networking.PodSubnet,
		ServiceSubnet:         internal.Networking.ServiceSubnet,
		DNSDomain:             internal.Networking.DNSDomain,
		ControlPlaneEndpoint:  internal.ControlPlaneEndpoint,
		ControllerManagerArgs: map[string]string{},
	}
	for _, a := range internal.ControllerManager.ExtraArgs {
		f.ControllerManagerArgs[a.Name] = a.Value
	}
	return f, nil
}

// parseLegacyKubeadm reads kubeadm.k8s.io/v1beta1-v1beta3, where controllerManager.extraArgs
// is a map.
func parseLegacyKubeadm(data []byte) (*kubeadmFacts, error) {
	var doc struct {
		APIVersion           string `json:"apiVersion"`
		Kind                 string `json:"kind"`
		KubernetesVersion    string `json:"kubernetesVersion"`
		ClusterName          string `json:"clusterName"`
		ControlPlaneEndpoint string `json:"controlPlaneEndpoint"`
		Networking           struct {
			PodSubnet     string `json:"podSubnet"`
			ServiceSubnet string `json:"serviceSubnet"`
			DNSDomain     string `json:"dnsDomain"`
		} `json:"networking"`
		ControllerManager struct {
			ExtraArgs map[string]string `json:"extraArgs"`
		} `json:"controllerManager"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode ClusterConfiguration: %w", err)
	}
	switch doc.APIVersion {
	case "kubeadm.k8s.io/v1beta1", "kubeadm.k8s.io/v1beta2", "kubeadm.k8s.io/v1beta3":
	default:
		return nil, fmt.Errorf("unsupported ClusterConfiguration apiVersion %q", doc.APIVersion)
	}
	if doc.Kind != "ClusterConfiguration" {
		return nil, fmt.Errorf("kind is %q, expected ClusterConfiguration", doc.Kind)
	}
	f := &kubeadmFacts{
		APIVersion:            doc.APIVersion,
		KubernetesVersion:     doc.KubernetesVersion,
		ClusterName:           doc.ClusterName,
		PodSubnet:             doc.Networking.PodSubnet,
		ServiceSubnet:         doc.Networking.ServiceSubnet,
		DNSDomain:             doc.Networking.DNSDomain,
		ControlPlaneEndpoint:  doc.ControlPlaneEndpoint,
		ControllerManagerArgs: doc.ControllerManager.ExtraArgs,
	}
	if f.ControllerManagerArgs == nil {
		f.ControllerManagerArgs = map[string]string{}
	}
	return f, nil
}

// decodeComponentConfig decodes one component config document with the official external type's
// scheme, without defaulting.
func decodeComponentConfig(data []byte, add func(*runtime.Scheme) error, into runtime.Object) error {
	s := runtime.NewScheme()
	if err := add(s); err != nil {
		return err
	}
	obj, gvk, err := serializer.NewCodecFactory(s).UniversalDeserializer().Decode(data, nil, into)
	if err != nil {
		return err
	}
	if obj != into {
		return fmt.Errorf("unexpected %s", gvk)
	}
	return nil
}

// parseKubeProxyConfiguration decodes kube-proxy's config.conf (kubeproxy.config.k8s.io/v1alpha1).
func parseKubeProxyConfiguration(data []byte) (*kubeproxyv1alpha1.KubeProxyConfiguration, error) {
	var kp kubeproxyv1alpha1.KubeProxyConfiguration
	if err := decodeComponentConfig(data, kubeproxyv1alpha1.AddToScheme, &kp); err != nil {
		return nil, fmt.Errorf("decode KubeProxyConfiguration: %w", err)
	}
	return &kp, nil
}

// parseKubeletConfiguration decodes the kubelet-config ConfigMap (kubelet.config.k8s.io/v1beta1).
func parseKubeletConfiguration(data []byte) (*kubeletv1beta1.KubeletConfiguration, error) {
	var kc kubeletv1beta1.KubeletConfiguration
	if err := decodeComponentConfig(data, kubeletv1beta1.AddToScheme, &kc); err != nil {
		return nil, fmt.Errorf("decode KubeletConfiguration: %w", err)
	}
	return &kc, nil
}
