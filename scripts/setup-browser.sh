#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests (test/e2e/web-interfaces.test.ts drives it with
# playwright-core). Does nothing when it is already there; CHROMIUM_PATH points at another binary.
set -euo pipefail
bin="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$bin" ]; then exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium
