// Package render turns a plan into files: one file of this package per artifact family
// (keepalived.go, cni.go, kubelet.go, ...), and Render for the whole bundle. Rendering is pure
// and byte-deterministic; the consumers of each artifact (keepalived, libcni, the kubelet and
// kube-proxy config schemes, containerd's TOML) check the output in this package's tests.
package render
