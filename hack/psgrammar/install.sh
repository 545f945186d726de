#!/usr/bin/env bash
# Installs the PowerShell grammar test oracle (web-tree-sitter + tree-sitter-powershell's
# WebAssembly build, versions pinned in package-lock.json) into hack/psgrammar/node_modules.
# Idempotent; needs node and npm (hack/install-deps.sh installs them). No native build: the
# grammar's install scripts are skipped and its .wasm is used.
set -euo pipefail
cd "$(dirname "$0")"
exec 9>.install.lock
flock 9
if [ -f node_modules/tree-sitter-powershell/tree-sitter-powershell.wasm ] && [ -f node_modules/web-tree-sitter/tree-sitter.wasm ]; then
  exit 0
fi
npm ci --ignore-scripts --omit=peer --no-audit --no-fund --loglevel=error >&2
