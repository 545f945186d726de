    C:\k\kube-proxy.exe --hostname-override=$(hostname)
