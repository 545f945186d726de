    sc.exe create <组件名称> binPath= "<可执行文件路径> -service <其它参数>"
    sc.exe create kubelet binPath= "C:\kubelet.exe --service --hostname-override 'minion' <其它参数>"
