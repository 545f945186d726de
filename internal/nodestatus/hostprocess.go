package nodestatus

// ReasonCNINetworkFailing: on a node whose HNS network a CNI DaemonSet's HostProcess pod owns
// (designs calico/hostprocess and flannel/hostprocess), that network is missing or wrong, or
// the pod fails; the message names the pod's failure (image pull, crash with its log's last
// line, not scheduled, forbidden). The node service never makes that network itself.
const ReasonCNINetworkFailing = "CNINetworkFailing"
