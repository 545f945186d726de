.\proxy.exe –v=3 –proxy-mode=userspace –hostname-override=<ip address/hostname of the windows node> –master=<api server location> –bind-address=<ip address of the windows node>
