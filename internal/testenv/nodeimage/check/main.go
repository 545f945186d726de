// Command check is a workload image of kubewin's end-to-end tests, which have no image registry:
// a pod that runs to completion. It prints one line "ip=ADDR" for each global unicast address of
// its network interfaces (the pod's IPs), then "KUBEWIN_CHECK=VALUE" with the value of that
// environment variable, and exits 0. Test infrastructure only; built by nodeimage.BuildStatic.
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	ifaces, err := net.Interfaces()
	if err != nil {
		fmt.Fprintf(os.Stderr, "check: list interfaces: %v\n", err)
		os.Exit(1)
	}
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			fmt.Fprintf(os.Stderr, "check: addresses of %s: %v\n", iface.Name, err)
			os.Exit(1)
		}
		for _, a := range addrs {
			ipnet, ok := a.(*net.IPNet)
			if ok && ipnet.IP.IsGlobalUnicast() {
				fmt.Printf("ip=%s\n", ipnet.IP)
			}
		}
	}
	fmt.Printf("KUBEWIN_CHECK=%s\n", os.Getenv("KUBEWIN_CHECK"))
}
