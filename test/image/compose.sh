#!/usr/bin/env bash
# The Compose files, run for real: deploy/compose/one-node.yaml, then
# several-nodes.yaml (three nodes on PostgreSQL behind nginx).
#
# One node: /readyz on the published port, a signed aws CLI call, the
# image's health check; down -v. Several nodes: /readyz through the
# balancer; a fleet, a compute and two Go SDK game servers
# (examples/chat) connected through the balancer; a game session created
# through it goes ACTIVE; one created by calling a node that holds no
# process goes ACTIVE (a push forwarded node to node with the node
# secret); a node stopped with SIGTERM drains while API calls through the
# balancer go on; down -v.
#
# Needs podman with podman-compose, or docker with its compose plugin; the
# aws CLI; Go; ports 9870-9872 free. Without them it prints "SKIP ..." and
# exits 0. The anylift image is built from a binary built here
# (deploy/image/build.sh), or IMAGE=name is used. Where postgres:16 and
# nginx:1.27 cannot be pulled, test/image/standins.sh makes stand-ins of
# this machine's packages (removed afterwards). Not in .ci/run: minutes
# long, and fixed ports.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
export PATH="/usr/local/go/bin:$HOME/go/bin:$HOME/.pyenv/shims:$PATH"

trap 'echo "FAIL compose test: line $LINENO: $BASH_COMMAND" >&2' ERR
skip() { echo "SKIP compose test: $*"; exit 0; }
fail() { echo "FAIL compose test: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

if command -v podman >/dev/null && command -v podman-compose >/dev/null; then
  engine=podman compose=(podman-compose)
elif command -v docker >/dev/null && docker info >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
  engine=docker compose=(docker compose)
else
  skip "no podman with podman-compose, nor docker with compose"
fi
command -v aws >/dev/null || skip "no aws CLI"
for p in 9870 9871 9872; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then skip "port $p is in use"; fi
done

tmp=$(mktemp -d)
made=()     # images this script made
chats=()    # game server pids
project=""
file=""
export ANYLIFT_NODE_SECRET=compose-test-node-secret-0123 POSTGRES_PASSWORD='p@ss w/ord'
export AWS_ACCESS_KEY_ID=AKIDCOMPOSETEST AWS_SECRET_ACCESS_KEY=compose-test-secret AWS_DEFAULT_REGION=us-west-2
stop_chats() { # SIGTERM while the service is up (they report ProcessEnding), SIGKILL what is left
  local c
  for c in "${chats[@]}"; do kill "$c" 2>/dev/null || true; done
  for _ in $(seq 1 25); do
    local alive=0
    for c in "${chats[@]}"; do kill -0 "$c" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for c in "${chats[@]}"; do kill -9 "$c" 2>/dev/null || true; done
  chats=()
}
down() {
  [ -n "$file" ] || return 0
  # The image's VOLUME gives each container an anonymous /data volume,
  # which podman-compose's down -v leaves, and it leaves the network.
  local vols c
  vols=$(for c in $("$engine" ps -a -q --filter "label=com.docker.compose.project=$project"); do
    "$engine" inspect "$c" --format '{{range .Mounts}}{{if eq .Destination "/data"}}{{.Name}} {{end}}{{end}}'
  done)
  (cd "$tmp" && "${compose[@]}" -p "$project" -f "$file" down -v >>"$tmp/engine.log" 2>&1) || true
  for v in $vols; do "$engine" volume rm -f "$v" >/dev/null 2>&1 || true; done
  "$engine" network rm "${project}_default" >/dev/null 2>&1 || true
  file=""
}
cleanup() {
  stop_chats
  down
  for i in "${made[@]}"; do "$engine" rmi -f "$i" >/dev/null 2>&1 || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$engine" = podman ]; then
  # As in test/image/run.sh: runc where crun refuses hybrid cgroups, and
  # limits no higher than this shell's, through podman's own settings so
  # that podman-compose's containers get them too.
  nofile=$(ulimit -Hn); [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ] && nofile=65536
  {
    echo '[containers]'
    echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=4096:4096\"]"
    if [ -d /sys/fs/cgroup/unified ] && command -v runc >/dev/null; then
      printf '[engine]\nruntime = "runc"\n'
    fi
  } > "$tmp/containers.conf"
  export CONTAINERS_CONF=$tmp/containers.conf
fi

echo "== compose test with ${compose[*]}"
image=${IMAGE:-}
if [ -z "$image" ]; then
  image=localhost/anylift-composetest:$$
  VERSION=v0.0.0-composetest CONTAINER_TOOL=$engine deploy/image/build.sh "$image" >>"$tmp/engine.log" 2>&1 || fail "image build"
  made+=("$image")
fi
export ANYLIFT_IMAGE=$image
for i in docker.io/library/postgres:16 docker.io/library/nginx:1.27; do
  if ! "$engine" image exists "$i" 2>/dev/null && ! "$engine" image inspect "$i" >/dev/null 2>&1 \
     && ! "$engine" pull -q "$i" >/dev/null 2>&1; then
    test/image/standins.sh "$engine" >>"$tmp/engine.log" 2>&1 || fail "stand-in images (see test/image/standins.sh)"
    made+=(docker.io/library/postgres:16 docker.io/library/nginx:1.27)
    ok "postgres:16 and nginx:1.27 cannot be pulled here: stand-ins made of this machine's packages"
    break
  fi
done
cp deploy/compose/one-node.yaml deploy/compose/several-nodes.yaml deploy/compose/nginx.conf "$tmp/"
mkdir "$tmp/anylift-keys"
printf '%s %s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" > "$tmp/anylift-keys/credentials"
chown -R 65532 "$tmp/anylift-keys" 2>/dev/null || chmod -R a+rX "$tmp/anylift-keys"

up() { # PROJECT FILE
  project=$1 file=$2
  (cd "$tmp" && "${compose[@]}" -p "$project" -f "$file" up -d >>"$tmp/engine.log" 2>&1) || fail "$file: up"
}
ready() { # URL: wait up to 90 s for 200 (podman-compose starts nodes before PostgreSQL answers; they restart)
  for _ in $(seq 1 450); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/readyz" || true)" = 200 ] && return 0
    sleep 0.2
  done
  "$engine" ps -a >&2
  fail "$1/readyz did not answer 200"
}
api() { aws gamelift --endpoint-url "${endpoint:-http://127.0.0.1:9870}" "$@"; }

# One node.
up anylift-c1 one-node.yaml
ready http://127.0.0.1:9870
api create-location --location-name custom-compose >/dev/null || fail "one-node: signed create-location"
api list-locations --query 'Locations[].LocationName' --output text | grep -q custom-compose || fail "one-node: list-locations"
node=$("$engine" ps -a --filter label=com.docker.compose.project=anylift-c1 --format '{{.Names}}' | head -1)
"$engine" exec "$node" /anylift healthcheck >/dev/null || fail "one-node: /anylift healthcheck"
ok "one-node.yaml: ready on :9870, signed calls answered, health check passes"
# A key added by renaming a new credentials file over the old one on the
# host is taken up through the directory mount, without a restart.
cp "$tmp/anylift-keys/credentials" "$tmp/anylift-keys/.new"
echo "AKIDCOMPOSEADDED compose-added-secret" >> "$tmp/anylift-keys/.new"
chown 65532 "$tmp/anylift-keys/.new" 2>/dev/null || chmod a+r "$tmp/anylift-keys/.new"
mv "$tmp/anylift-keys/.new" "$tmp/anylift-keys/credentials"
added=""
for _ in $(seq 1 50); do
  if AWS_ACCESS_KEY_ID=AKIDCOMPOSEADDED AWS_SECRET_ACCESS_KEY=compose-added-secret api list-locations >/dev/null 2>&1; then
    added=yes; break
  fi
  sleep 0.2
done
[ -n "$added" ] || fail "one-node: a key added to the mounted credentials file was not taken up"
ok "one-node.yaml: a key added on the host (file renamed over the old) is accepted without a restart"
down

# Several nodes.
go build -o "$tmp/chat" ./examples/chat
up anylift-c3 several-nodes.yaml
ready http://127.0.0.1:9870
ok "several-nodes.yaml: ready through the balancer"
api create-location --location-name custom-c3 >/dev/null
fleet=$(api create-fleet --name c3 --compute-type ANYWHERE --locations Location=custom-c3 --query FleetAttributes.FleetId --output text)
sdk=$(api register-compute --fleet-id "$fleet" --compute-name host1 --ip-address 127.0.0.1 --location custom-c3 \
  --query Compute.GameLiftServiceSdkEndpoint --output text)
[ "$sdk" = ws://127.0.0.1:9870 ] || fail "the compute's SDK endpoint is $sdk, not the balancer"
token=$(api get-compute-auth-token --fleet-id "$fleet" --compute-name host1 --query AuthToken --output text)
for i in 1 2; do
  "$tmp/chat" -websocketurl ws://127.0.0.1:9870 -authtoken "$token" -hostid host1 -fleetid "$fleet" \
    -processid "proc-$i" -port "1787$i" >"$tmp/chat$i.log" 2>&1 &
  chats+=($!)
done
# Which node holds which process, from each node's metrics (the host
# reaches the containers' addresses).
# Nodes that started before PostgreSQL answered were restarted: wait
# until each one is up and ready at its own address.
declare -A addr held cname
for n in node-a node-b node-c; do
  cname[$n]=$("$engine" ps -a --filter label=com.docker.compose.project=anylift-c3 \
    --filter "label=com.docker.compose.service=$n" --format '{{.Names}}' | head -1)
  [ -n "${cname[$n]}" ] || fail "no container for $n"
  for _ in $(seq 1 300); do
    addr[$n]=$("$engine" inspect "${cname[$n]}" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' 2>/dev/null || true)
    if [ -n "${addr[$n]}" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "http://${addr[$n]}:9870/readyz" || true)" = 200 ]; then
      break
    fi
    addr[$n]=""
    sleep 0.2
  done
  [ -n "${addr[$n]}" ] || fail "$n did not become ready"
done
for _ in $(seq 1 100); do
  total=0
  for n in node-a node-b node-c; do
    held[$n]=$(curl -s -m 2 "http://${addr[$n]}:9870/metrics" | awk '/^anylift_sdk_connected_processes / {print $2}')
    total=$((total + ${held[$n]:-0}))
  done
  [ "$total" = 2 ] && break
  sleep 0.2
done
[ "$total" = 2 ] || fail "the game servers did not connect through the balancer (${held[*]})"
ok "two game servers connected through the balancer (a=${held[node-a]} b=${held[node-b]} c=${held[node-c]})"

active() { # NAME: wait up to 10 s for the session to be ACTIVE
  for _ in $(seq 1 50); do
    [ "$(api describe-game-sessions --fleet-id "$fleet" --query "GameSessions[?Name=='$1'].Status | [0]" --output text)" = ACTIVE ] && return 0
    sleep 0.2
  done
  fail "game session $1 is not ACTIVE"
}
api create-game-session --fleet-id "$fleet" --location custom-c3 --maximum-player-session-count 2 --name via-balancer >/dev/null
active via-balancer
ok "a game session created through the balancer is ACTIVE"
idle=""
for n in node-a node-b node-c; do [ "${held[$n]:-0}" = 0 ] && idle=$n && break; done
[ -n "$idle" ] || fail "no node without a process"
endpoint=http://${addr[$idle]}:9870 api create-game-session --fleet-id "$fleet" --location custom-c3 \
  --maximum-player-session-count 2 --name "via-$idle" >/dev/null
active "via-$idle"
ok "a game session created on $idle, which holds no process, is ACTIVE: pushed node to node"

busy=""
for n in node-a node-b node-c; do [ "${held[$n]:-0}" != 0 ] && busy=$n && break; done
c=${cname[$busy]}
"$engine" stop -t 45 "$c" >>"$tmp/engine.log" 2>&1
"$engine" logs "$c" 2>&1 | grep -q 'draining: handing processes to other nodes' || fail "$busy did not drain"
for _ in $(seq 1 100); do
  total=0
  for n in node-a node-b node-c; do
    [ "$n" = "$busy" ] && continue
    v=$(curl -s -m 2 "http://${addr[$n]}:9870/metrics" | awk '/^anylift_sdk_connected_processes / {print $2}')
    total=$((total + ${v:-0}))
  done
  [ "$total" = 2 ] && break
  sleep 0.2
done
[ "$total" = 2 ] || fail "the game servers did not move off the drained node"
n=$(api describe-game-sessions --fleet-id "$fleet" --query 'length(GameSessions[?Status==`ACTIVE`])' --output text)
[ "$n" = 2 ] || fail "$n sessions ACTIVE after the drain"
ok "$busy stopped with SIGTERM drained its game servers to the others; the API answered through the balancer"
stop_chats
down
echo "== compose test passed"
