#!/usr/bin/env bash
# Installs the programs the tests run for real (Debian packages), if missing. Idempotent.
set -euo pipefail
need=()
command -v keepalived >/dev/null || need+=(keepalived)
command -v ip >/dev/null || need+=(iproute2)
command -v rg >/dev/null || need+=(ripgrep)
command -v ping >/dev/null || need+=(iputils-ping)
# iptables emulates OutBoundNAT and Calico natOutgoing in verify's datapath emulation test
command -v iptables >/dev/null || need+=(iptables)
command -v flock >/dev/null || need+=(util-linux)
command -v nsenter >/dev/null || need+=(util-linux)
# runc runs the join end-to-end test's pods (internal/join): Debian's is built with seccomp,
# which the CRI's default profile needs
command -v runc >/dev/null || [ -x /usr/sbin/runc ] || need+=(runc)
# cloud-init validates the Linux user-data of kubewin token create --print-user-data
command -v cloud-init >/dev/null || need+=(cloud-init)
# systemd-analyze verifies the node service unit kubewin join installs (offline; no systemd runs)
command -v systemd-analyze >/dev/null || need+=(systemd)
# node + npm run the PowerShell grammar test oracle (hack/psgrammar)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
# headless Chromium runs the report page test (internal/report)
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: need root to install ${need[*]} (or install them yourself)" >&2
    exit 2
  fi
  echo "install-deps: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# The PowerShell grammar (tree-sitter-powershell, WebAssembly) used as a test oracle for .ps1 files.
"$(dirname "$0")/psgrammar/install.sh"
