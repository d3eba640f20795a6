#!/usr/bin/env bash
# The image, built and run for real: deploy/image/build.sh builds it from a
# binary built here (base images cannot be pulled on every machine), then
# the script checks its settings (user 65532, /data volume, ports, health
# check), runs it with a named volume on /data and a key pair, waits for
# /readyz, runs the image's own health check, makes a signed API call with
# the aws CLI, checks the server runs as 65532, stops it with SIGTERM
# (exit 0), starts it again and finds what it wrote, and removes the
# container, the volume and the image.
#
# IMAGE=name tests that image instead of building one (the root
# Containerfile's, for example), and leaves it in place.
#
# Uses podman, or docker with a running daemon; without either (or
# without the aws CLI) it prints "SKIP ..." and exits 0. Exits non-zero
# when a check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$HOME/.pyenv/shims:$PATH"

skip() { echo "SKIP image test: $*"; exit 0; }
# The engine's own messages go to a log, shown when a check fails (podman
# without systemd complains at every start that it cannot time the
# health checks; the check is run by hand below).
log=$(mktemp)
fail() { echo "FAIL image test: $*" >&2; sed 's/^/  engine: /' "$log" >&2; exit 1; }
ok() { echo "ok   $*"; }

if command -v podman >/dev/null; then
  tool=podman
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  tool=docker
else
  skip "no container runtime (podman, or docker with a running daemon)"
fi
command -v aws >/dev/null || skip "no aws CLI"

engine=("$tool")
run_flags=()
if [ "$tool" = podman ]; then
  # crun refuses a host with cgroup v1 and v2 mounted side by side
  # (hybrid); runc runs there.
  if [ -d /sys/fs/cgroup/unified ] && command -v runc >/dev/null; then
    engine+=(--runtime runc)
  fi
  # podman asks for higher limits than a host without CAP_SYS_RESOURCE
  # may grant: ask for no more than this shell has.
  nofile=$(ulimit -Hn); [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
  run_flags+=(--ulimit "nofile=$nofile:$nofile" --ulimit nproc=4096:4096)
fi

id=$$
image=${IMAGE:-localhost/anylift-imagetest:$id}
name=anylift-imagetest-$id
volume=anylift-imagetest-$id
cleanup() {
  rm -f "$log"
  "${engine[@]}" rm -f -t 5 "$name" >/dev/null 2>&1 || true
  "${engine[@]}" volume rm -f "$volume" >/dev/null 2>&1 || true
  [ -n "${IMAGE:-}" ] || "${engine[@]}" rmi -f "$image" >/dev/null 2>&1 || true
}
trap cleanup EXIT
started=$(date +%s)

echo "== image test with ${engine[*]}"
if [ -z "${IMAGE:-}" ]; then
  VERSION=v0.0.0-imagetest CONTAINER_TOOL=$tool deploy/image/build.sh "$image" >>"$log" 2>&1 || fail "build"
  ok "built $image from deploy/image/Containerfile.prebuilt"
fi

conf() { "${engine[@]}" image inspect "$image" --format "$1"; }
[ "$(conf '{{.Config.User}}')" = 65532:65532 ] || fail "user is $(conf '{{.Config.User}}')"
case "$(conf '{{json .Config.Volumes}}')" in *'"/data"'*) ;; *) fail "no /data volume";; esac
for p in 9870 9871 9872 9880; do
  case "$(conf '{{json .Config.ExposedPorts}}')" in *"\"$p/tcp\""*) ;; *) fail "port $p not exposed";; esac
done
case "$(conf '{{json .Config.Healthcheck}}')" in *'"/anylift","healthcheck"'*) ;; *) fail "no health check: $(conf '{{json .Config.Healthcheck}}')";; esac
ok "image: user 65532:65532, volume /data, ports 9870-9872 and 9880, HEALTHCHECK /anylift healthcheck"

commit=$(git rev-parse HEAD)
v=$("${engine[@]}" run --rm "${run_flags[@]}" "$image" version 2>>"$log")
want="anylift v0.0.0-imagetest commit ${commit:0:12} "
[ -z "${IMAGE:-}" ] || want="anylift "
case "$v" in "$want"*linux/*) ;; *) fail "version: $v";; esac
ok "anylift version: $v"

export AWS_ACCESS_KEY_ID=AKIDIMAGETEST AWS_SECRET_ACCESS_KEY=image-test-secret AWS_DEFAULT_REGION=us-west-2
start() {
  "${engine[@]}" "$@" >/dev/null 2>>"$log" || fail "$1"
  port=$("${engine[@]}" port "$name" 9870/tcp | head -1 | sed 's/.*://')
  [ -n "$port" ] || fail "no published port"
  url=http://127.0.0.1:$port
  for _ in $(seq 1 100); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz" || true)" = 200 ]; then return 0; fi
    "${engine[@]}" inspect "$name" --format '{{.State.Running}}' | grep -q true \
      || { "${engine[@]}" logs "$name" >&2; fail "the container exited"; }
    sleep 0.2
  done
  "${engine[@]}" logs "$name" >&2
  fail "/readyz did not answer 200 within 20 s"
}
start run -d --name "$name" "${run_flags[@]}" -p 127.0.0.1::9870 -v "$volume:/data" \
  -e ANYLIFT_ACCESS_KEY="$AWS_ACCESS_KEY_ID" -e ANYLIFT_SECRET_KEY="$AWS_SECRET_ACCESS_KEY" \
  -e ANYLIFT_SDK_ENDPOINT=ws://127.0.0.1:9870 "$image"
ok "running; $url/readyz answers 200 from the host"

"${engine[@]}" exec "$name" /anylift healthcheck >/dev/null || fail "/anylift healthcheck in the container"
if [ "$tool" = podman ]; then
  "${engine[@]}" healthcheck run "$name" 2>>"$log" || fail "podman healthcheck run"
fi
ok "the image's health check passes"

pid=$("${engine[@]}" inspect "$name" --format '{{.State.Pid}}')
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
[ "$uid" = 65532 ] || fail "the server runs as uid $uid"
ok "the server runs as uid 65532"

aws gamelift create-location --location-name custom-image --endpoint-url "$url" >/dev/null \
  || fail "signed create-location"
got=$(aws gamelift list-locations --endpoint-url "$url" --query 'Locations[].LocationName' --output text)
case "$got" in *custom-image*) ;; *) fail "list-locations: $got";; esac
AWS_SECRET_ACCESS_KEY=wrong aws gamelift list-locations --endpoint-url "$url" >/dev/null 2>&1 \
  && fail "a wrong secret was accepted"
ok "signed aws CLI calls answered (and a wrong secret refused)"

"${engine[@]}" stop -t 30 "$name" >/dev/null 2>>"$log"
code=$("${engine[@]}" inspect "$name" --format '{{.State.ExitCode}}')
[ "$code" = 0 ] || { "${engine[@]}" logs "$name" >&2; fail "exit code $code after SIGTERM"; }
"${engine[@]}" logs "$name" 2>&1 | grep -q 'shutting down' || fail "no graceful shutdown in the log"
ok "SIGTERM: shut down gracefully, exit 0"

start start "$name"
got=$(aws gamelift list-locations --endpoint-url "$url" --query 'Locations[].LocationName' --output text)
case "$got" in *custom-image*) ;; *) fail "after a restart, list-locations: $got";; esac
ok "restarted: the store on the /data volume kept what was written"

echo "== image test passed in $(( $(date +%s) - started ))s"
