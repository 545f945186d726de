kubelet.exe –hostname-override=<ip address/hostname of the windows node> –pod-infra-container-image=”apprenda/pause” –resolv-conf=”” –api_servers=<api server location>
