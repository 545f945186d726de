package rules

import (
	"github.com/kubewin/kubewin/internal/platform"
)

// kubeletConfigFieldSince is the first release whose KubeletConfiguration has the field a
// kubelet flag sets, for the flags whose field came later than v1.13. A flag is advised into
// the config file (KW1107) only from that release: before it, following the advice drops the
// setting (the kubelet ignored containerRuntimeEndpoint in a v1.26 config file,
// kubernetes/kubernetes#118787).
//
// Derived from the flags bound to the KubeletConfiguration (&c.…) in
// cmd/kubelet/app/options/options.go AddKubeletConfigFlags of kubernetes v1.13.0, v1.18.20,
// v1.21.14, v1.25.16, v1.29.6, v1.33.13 and v1.37.1 (the module cache's trees): the release
// given is the first sampled tree that has the field, so it is an upper bound of when the field
// appeared, never earlier than the truth. Exact where a change names it:
// container-runtime-endpoint and image-service-endpoint moved in v1.27 (kubernetes/kubernetes
// #112136, CHANGELOG-1.27 "kubelet: migrate --container-runtime-endpoint and
// --image-service-endpoint to kubelet config").
var kubeletConfigFieldSince = map[string]platform.Version{
	"container-runtime-endpoint":       {Major: 1, Minor: 27},
	"image-service-endpoint":           {Major: 1, Minor: 27},
	"topology-manager-policy-options":  {Major: 1, Minor: 29},
	"register-node":                    {Major: 1, Minor: 25},
	"register-with-taints":             {Major: 1, Minor: 25},
	"cpu-manager-policy-options":       {Major: 1, Minor: 25},
	"local-storage-capacity-isolation": {Major: 1, Minor: 25},
	"enable-server":                    {Major: 1, Minor: 21},
	"kernel-memcg-notification":        {Major: 1, Minor: 21},
	"memory-manager-policy":            {Major: 1, Minor: 21},
	"node-status-max-images":           {Major: 1, Minor: 21},
	"provider-id":                      {Major: 1, Minor: 21},
	"reserved-memory":                  {Major: 1, Minor: 21},
	"runonce":                          {Major: 1, Minor: 21},
	"topology-manager-scope":           {Major: 1, Minor: 21},
	"volume-plugin-dir":                {Major: 1, Minor: 21},
	"allowed-unsafe-sysctls":           {Major: 1, Minor: 18},
	"reserved-cpus":                    {Major: 1, Minor: 18},
	"topology-manager-policy":          {Major: 1, Minor: 18},
	"fail-cgroupv1":                    {Major: 1, Minor: 33},
}

// configFieldExists reports whether the target release's KubeletConfiguration has the field
// flag sets (flags not in the table had theirs by v1.13).
func configFieldExists(flag string, target platform.Version) bool {
	since, ok := kubeletConfigFieldSince[flag]
	return !ok || target.AtLeast(since.Major, since.Minor)
}
