#!/usr/bin/env bash
# docker-up.sh: make a Docker engine answer on /var/run/docker.sock for the `container` (and
# `kind`) targets. Idempotent: every step checks first and says what it does.
#   1. dockerd missing -> apt-get update (once) and apt-get install -y docker.io jq (Debian).
#   2. the socket does not answer -> start dockerd in the background (log: $VOLPERM_DOCKERD_LOG).
#      Where this machine lacks CAP_SYS_RESOURCE in the bounding set (CapBnd bit 24), runc
#      cannot apply the default capability set; dockerd then gets a default runtime that strips
#      CAP_SYS_RESOURCE from the OCI config before calling the real runc.
#   3. wait (bounded: $VOLPERM_DOCKER_WAIT seconds, default 60) until `docker info` works.
# It never stops, removes or touches containers, images or a dockerd it did not start.
set -euo pipefail

SOCK=/var/run/docker.sock
LOG=${VOLPERM_DOCKERD_LOG:-/var/log/volperm-dockerd.log}
WAIT=${VOLPERM_DOCKER_WAIT:-60}
WRAPPER=/usr/local/libexec/volperm/runc-no-sys-resource
RUNTIME=volperm-runc

say() { echo "docker-up: $*"; }

# Bounded: a wedged dockerd (Debian's 20.10 once deadlocked in libnetwork while containers were
# removed concurrently) accepts the connection and never answers.
answers() { timeout 20 docker -H "unix://$SOCK" info >/dev/null 2>&1; }

if [[ -n "${DOCKER_HOST:-}" && "${DOCKER_HOST}" != "unix://$SOCK" ]]; then
	say "DOCKER_HOST=$DOCKER_HOST is set: this script only manages unix://$SOCK; unset it or start that engine yourself"
	exit 1
fi

if answers; then
	say "an engine already answers on $SOCK: nothing to do"
	docker -H "unix://$SOCK" version --format 'docker-up: server {{.Server.Version}} (API {{.Server.APIVersion}})'
	exit 0
fi

if pid=$(pgrep -xo dockerd); then
	say "dockerd (pid $pid) runs but does not answer on $SOCK within 20 s: it is wedged or still starting; waiting up to $WAIT s"
	for ((i = 0; i < WAIT; i += 20)); do
		answers && { say "it answers now"; exit 0; }
	done
	say "dockerd (pid $pid) does not answer: stop it (kill $pid) and run $0 again; see $LOG"
	exit 1
fi

if [[ $(id -u) -ne 0 ]]; then
	say "starting dockerd needs root (this is uid $(id -u)); run: sudo $0"
	exit 1
fi

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v jq >/dev/null || missing+=(jq)
if ((${#missing[@]})); then
	command -v apt-get >/dev/null || { say "${missing[*]} missing and no apt-get: install a Docker engine yourself"; exit 1; }
	say "installing ${missing[*]} (apt-get update; apt-get install -y ${missing[*]})"
	start=$SECONDS
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	say "installed in $((SECONDS - start)) s"
fi

# CAP_SYS_RESOURCE is capability 24 (linux/capability.h).
capbnd=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
runtime_args=()
if (((16#$capbnd >> 24 & 1) == 0)); then
	say "CAP_SYS_RESOURCE is not in this machine's bounding set (CapBnd $capbnd): runc gets a wrapper that drops it"
	runc=$(command -v runc) || { say "runc not found"; exit 1; }
	mkdir -p "$(dirname "$WRAPPER")"
	tmp=$(mktemp "$WRAPPER.XXXXXX")
	cat >"$tmp" <<WRAP
#!/bin/sh
# Written by volperm hack/docker-up.sh: drop CAP_SYS_RESOURCE (missing from this machine's bounding
# set) from the OCI config of create/run (bundle config.json) and exec (--process file), then runc.
set -e
strip() { # strip FILE JQPATH: remove CAP_SYS_RESOURCE from every capability list at JQPATH
	jq "\$2 |= (if . == null then . else with_entries(.value |= map(select(. != \"CAP_SYS_RESOURCE\"))) end)" "\$1" >"\$1.volperm"
	mv "\$1.volperm" "\$1"
}
cmd= bundle=. process= prev=
for a in "\$@"; do
	case "\$prev" in
	--bundle|-b) bundle=\$a ;;
	--process|-p) process=\$a ;;
	esac
	case "\$a" in
	--bundle=*) bundle=\${a#--bundle=} ;;
	--process=*) process=\${a#--process=} ;;
	create|run|exec) [ -z "\$cmd" ] && cmd=\$a ;;
	esac
	prev=\$a
done
case "\$cmd" in
create|run) [ -f "\$bundle/config.json" ] && strip "\$bundle/config.json" .process.capabilities ;;
exec) [ -n "\$process" ] && [ -f "\$process" ] && strip "\$process" .capabilities ;;
esac
exec $runc "\$@"
WRAP
	chmod 0755 "$tmp"
	mv "$tmp" "$WRAPPER"
	runtime_args=(--add-runtime "$RUNTIME=$WRAPPER" --default-runtime "$RUNTIME")
fi

say "starting dockerd ${runtime_args[*]} (log: $LOG)"
# In a session of its own (setsid; issue 52): a Ctrl-C of the script or CI that started it sends
# SIGINT to their process group, which dockerd then is not in; it outlives them, so that what
# they started (probe containers, kind nodes) can still be removed by them or by volperm cleanup.
setsid nohup dockerd "${runtime_args[@]}" >>"$LOG" 2>&1 </dev/null &
pid=$!
say "dockerd pid $pid; waiting up to $WAIT s for $SOCK"
for ((i = 0; i < WAIT * 2; i++)); do
	if answers; then
		docker -H "unix://$SOCK" version --format 'docker-up: server {{.Server.Version}} (API {{.Server.APIVersion}}) ready'
		exit 0
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		say "dockerd exited; last lines of $LOG:"
		tail -n 20 "$LOG" >&2
		exit 1
	fi
	sleep 0.5
done
say "dockerd (pid $pid) did not answer on $SOCK within $WAIT s; see $LOG"
exit 1
