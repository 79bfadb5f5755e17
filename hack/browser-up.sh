#!/usr/bin/env bash
# browser-up.sh: make a headless chromium available for framework/report's TestHTMLInABrowser
# (index.html checked in a real browser, issue 54). Idempotent: a chromium already on PATH (or
# named by $VOLPERM_BROWSER) is kept; else Debian's chromium is installed (apt-get). It never
# starts a browser: the test starts its own and ends it.
set -euo pipefail

say() { echo "browser-up: $*"; }

if [[ -n "${VOLPERM_BROWSER:-}" ]]; then
	say "VOLPERM_BROWSER=$VOLPERM_BROWSER: nothing to do"
	exit 0
fi
if p=$(command -v chromium || command -v chromium-browser); then
	say "$p: $("$p" --version 2>/dev/null || echo 'no version')"
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	say "installing chromium needs root (this is uid $(id -u)); run: sudo $0"
	exit 1
fi
command -v apt-get >/dev/null || { say "no chromium and no apt-get: install chromium and set VOLPERM_BROWSER"; exit 1; }
say "installing chromium (apt-get install -y --no-install-recommends chromium)"
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
# The package lists may be older than the archive's chromium: update them when the install fails.
if ! apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
say "installed in $((SECONDS - start)) s: $(chromium --version 2>/dev/null)"
