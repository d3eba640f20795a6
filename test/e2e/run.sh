#!/usr/bin/env bash
# End-to-end: build anylift, run it on a free port with a temp data dir,
# and drive it with boto3 (test/e2e/e2e.py) and the aws CLI, both from the
# machine's pyenv Python, both speaking AWS JSON 1.1. Game sessions cannot
# be created through the API yet, so the server is stopped once to seed a
# few ACTIVE sessions into its store (test/e2e/seed), which also checks that
# what was acknowledged survives a restart. Last, the real "anylift dev" on
# a temp data dir runs two chat servers through its agent and is driven by
# what it prints, with the aws CLI and anylift (no credentials), stopped with
# SIGINT and started again on the same fleet. The served node also runs
# the player gateway in dev mode, smoke-tested with curl on a second chat
# server.
#
# Prints each check; exits non-zero when any check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$HOME/go/bin:$HOME/.pyenv/shims:$PATH"

tmp=$(mktemp -d)
pid=""
chat=""
chat2=""
cleanup() {
  for c in "$chat" "$chat2"; do
    if [ -n "$c" ] && kill -0 "$c" 2>/dev/null; then
      kill -TERM "$c" 2>/dev/null || true
      wait "$c" 2>/dev/null || true
    fi
  done
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  if [ -n "${devpid:-}" ] && kill -0 "$devpid" 2>/dev/null; then
    kill -INT "$devpid" 2>/dev/null || true
    wait "$devpid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Credentials the server accepts and the clients use; nothing from the
# caller's AWS configuration leaks in.
export AWS_ACCESS_KEY_ID=AKIDANYLIFTE2E
export AWS_SECRET_ACCESS_KEY=anylift-e2e-secret
export AWS_DEFAULT_REGION=us-west-2
export AWS_MAX_ATTEMPTS=1
# Signs webhook bodies (X-Anylift-Signature); e2e.py verifies it.
export E2E_WEBHOOK_SECRET=anylift-e2e-webhook-secret
export AWS_CONFIG_FILE="$tmp/aws-config" AWS_SHARED_CREDENTIALS_FILE="$tmp/aws-credentials"
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_GAMELIFT 2>/dev/null || true
touch "$AWS_CONFIG_FILE" "$AWS_SHARED_CREDENTIALS_FILE"

failed=0
passed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }

echo "== build"
go build -o "$tmp/anylift" ./cmd/anylift
go build -o "$tmp/seed" ./test/e2e/seed
go build -o "$tmp/chat" ./examples/chat

# More keys, with limited rights and rates (e2e.py's READER and SLOW).
cat >"$tmp/reader.json" <<'EOF'
{"Version": "2012-10-17", "Statement": [
  {"Effect": "Allow", "Action": ["gamelift:Describe*", "gamelift:List*", "gamelift:Search*"], "Resource": "*"}]}
EOF
printf 'AKIDE2EREADER e2e-reader-secret reader.json\nAKIDE2ESLOW e2e-slow-secret - rate=0.001 burst=1\n' >"$tmp/credentials"

endpoint=""
gateway=""
start_server() {
  : >"$tmp/stdout"
  "$tmp/anylift" serve --listen 127.0.0.1:0 --tls-listen 127.0.0.1:0 --data-dir "$tmp/data" \
    --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" --credentials-file "$tmp/credentials" \
    --webhook-secret "$E2E_WEBHOOK_SECRET" --player-listen 127.0.0.1:0 --player-dev-mode \
    >"$tmp/stdout" 2>>"$tmp/server.log" &
  pid=$!
  for _ in $(seq 1 100); do
    if grep -q '^console at ' "$tmp/stdout"; then break; fi
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  endpoint=$(sed -n 's/^anylift listening on //p' "$tmp/stdout")
  gateway=$(sed -n 's/^player gateway on //p' "$tmp/stdout")
  if [ -z "$endpoint" ]; then
    echo "anylift did not start:" >&2
    cat "$tmp/server.log" >&2
    exit 1
  fi
  if [ "$(curl -fsS "$endpoint/healthz")" != "ok" ]; then
    echo "/healthz is not ok at $endpoint" >&2
    exit 1
  fi
  echo "anylift up at $endpoint (pid $pid)"
}

stop_server() {
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  pid=""
  if [ "$rc" -eq 0 ]; then ok "anylift stops with exit 0 on SIGTERM"; else fail "anylift exit status $rc on SIGTERM"; fi
}

# py runs a boto3 phase and adds its counts to ours.
py() {
  local rc=0
  python3 test/e2e/e2e.py "$endpoint" "$tmp/state.json" "$1" | tee "$tmp/py.out" || rc=$?
  passed=$((passed + $(grep -c '^ok ' "$tmp/py.out" || true)))
  failed=$((failed + $(grep -c '^FAIL ' "$tmp/py.out" || true)))
  if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$tmp/py.out"; then fail "e2e.py $1 crashed (status $rc)"; fi
}

# cli NAME WANT -- ARGS...: runs "aws gamelift ARGS"; passes when it exits 0
# and its output, with tabs and newlines as spaces, contains WANT.
cli() {
  local name=$1 want=$2
  shift 3
  local out rc=0
  out=$(aws --endpoint-url "$endpoint" --output text gamelift "$@" 2>&1) || rc=$?
  out=$(printf '%s' "$out" | tr '\t\n' '  ') # text output: tabs within a page, lines between pages
  if [ "$rc" -eq 0 ] && [[ "$out" == *"$want"* ]]; then ok "aws $name"; else fail "aws $name (status $rc): $out"; fi
}

# cli_error NAME CODE -- ARGS...: the CLI must exit 255 naming the exception.
cli_error() {
  local name=$1 code=$2
  shift 3
  local out rc=0
  out=$(aws --endpoint-url "$endpoint" gamelift "$@" 2>&1) || rc=$?
  if [ "$rc" -eq 255 ] && [[ "$out" == *"An error occurred ($code)"* ]]; then
    ok "aws $name -> $code"
  else
    fail "aws $name: status $rc, want 255 and ($code): $out"
  fi
}

# gw PLAYER PATH BODY [CURL ARGS...]: POSTs JSON to the player gateway as
# PLAYER (dev mode: no token, the X-Anylift-Player-Id header; none when
# PLAYER is empty); the body lands in $tmp/gw.json, the status in $gw_status.
gw() {
  local player=$1 path=$2 body=$3
  shift 3
  gw_status=$(curl -sS -o "$tmp/gw.json" -w '%{http_code}' -X POST -H "Content-Type: ${gw_type:-application/json}" \
    ${player:+-H "X-Anylift-Player-Id: $player"} --data "$body" "$@" "$gateway$path") || gw_status=000
}
# gwj EXPR: prints the Python expression EXPR over the answer's JSON (d).
gwj() { python3 -c 'import json, sys; d = json.load(open(sys.argv[2])); print(eval(sys.argv[1]))' "$1" "$tmp/gw.json" 2>/dev/null || true; }

gateway_smoke() {
  if [ -z "$gateway" ]; then
    fail "no player gateway address in the startup output: $(cat "$tmp/stdout")"
    return
  fi
  ok "player gateway at $gateway"
  # The second chat server takes a few hundred ms to connect and activate.
  local end=$((SECONDS + 10))
  while :; do
    gw e2e-gw-player /v1/sessions "{\"FleetId\":\"$fleet_id\",\"MaximumPlayerSessionCount\":2,\"Name\":\"e2e-gateway\"}"
    if [ "$(gwj 'd.get("Code")')" != FleetCapacityExceeded ] || [ "$SECONDS" -ge "$end" ]; then break; fi
    sleep 0.2
  done
  local gs ps ip port
  gs=$(gwj 'd["GameSessionId"]') ps=$(gwj 'd["PlayerSessionId"]') ip=$(gwj 'd["IpAddress"]') port=$(gwj 'd["Port"]')
  if [ "$gw_status" = 200 ] && [[ "$gs" == arn:aws:gamelift:*gamesession/* ]] && [[ "$ps" == psess-* ]] &&
    [ "$ip" = 127.0.0.1 ] && [ "${port:-0}" -gt 0 ]; then
    ok "gateway create on the fleet: $gs, seat $ps at $ip:$port"
  else
    fail "gateway create: status $gw_status: $(cat "$tmp/gw.json")"
    return
  fi
  cli "the gateway's seat is a RESERVED player session" "RESERVED" -- describe-player-sessions --player-session-id "$ps"
  gw e2e-gw-player /v1/sessions/search "{\"FleetId\":\"$fleet_id\",\"FilterExpression\":\"gameSessionName = 'e2e-gateway'\"}"
  if [ "$gw_status" = 200 ] && [ "$(gwj '",".join(s["GameSessionId"] + " " + str(s["CurrentPlayerSessionCount"]) for s in d["GameSessions"])')" = "$gs 1" ]; then
    ok "gateway search finds it with one seat taken"
  else
    fail "gateway search: status $gw_status: $(cat "$tmp/gw.json")"
  fi
  gw e2e-gw-player /v1/sessions/leave "{\"GameSessionId\":\"$gs\"}"
  if [ "$gw_status" = 200 ] && [ "$(gwj '",".join(d["PlayerSessionIds"])')" = "$ps" ]; then
    ok "gateway leave ends the seat"
  else
    fail "gateway leave: status $gw_status: $(cat "$tmp/gw.json")"
  fi
  cli "... its player session is COMPLETED" "COMPLETED" -- describe-player-sessions --player-session-id "$ps" \
    --query 'PlayerSessions[0].Status'
  gw e2e-gw-player /v1/sessions/search "{\"FleetId\":\"$fleet_id\",\"FilterExpression\":\"gameSessionName = 'e2e-gateway'\"}"
  if [ "$(gwj 'd["GameSessions"][0]["CurrentPlayerSessionCount"]')" = 0 ]; then ok "... and its seat is free"; else fail "after leave: $(cat "$tmp/gw.json")"; fi
  gw "" /v1/sessions/search "{\"FleetId\":\"$fleet_id\"}"
  if [ "$gw_status" = 401 ] && [ "$(gwj 'd.get("Code")')" = MissingToken ]; then ok "gateway without a player -> 401 MissingToken"; else fail "gateway without a player: $gw_status $(cat "$tmp/gw.json")"; fi
  gw_type=application/x-amz-json-1.1 gw e2e-gw-player / "{\"FleetId\":\"$fleet_id\"}" -H 'X-Amz-Target: GameLift.DeleteFleet'
  if [ "$gw_status" = 404 ] && [ "$(gwj 'd.get("Code")')" = NotFound ]; then
    ok "gateway refuses an admin operation (GameLift.DeleteFleet -> 404 NotFound)"
  else
    fail "gateway answered GameLift.DeleteFleet with $gw_status: $(cat "$tmp/gw.json")"
  fi
  # (the aws CLI checks below describe the fleet: it is still there)
}

echo "== boto3: setup"
start_server
py setup
stop_server

fleet_id=""
if [ -f "$tmp/state.json" ]; then
  fleet_id=$(sed -n 's/.*"fleet_id": "\([^"]*\)".*/\1/p' "$tmp/state.json")
fi
if [ -n "$fleet_id" ]; then
  echo "== seed game sessions into $fleet_id"
  if "$tmp/seed" -data-dir "$tmp/data" -fleet-id "$fleet_id" -location custom-e2e -count 6 >"$tmp/state.json.sessions"; then
    ok "seeded $(wc -l <"$tmp/state.json.sessions") game sessions"
  else
    fail "seeding game sessions"
  fi
fi

echo "== boto3: after restart"
start_server
py main

if [ -n "$fleet_id" ]; then
  echo "== boto3: placement through a queue onto the chat game server"
  token=$(aws --endpoint-url "$endpoint" --output text gamelift get-compute-auth-token \
    --fleet-id "$fleet_id" --compute-name e2e-compute --query AuthToken)
  "$tmp/chat" -websocketurl "${endpoint/http:/ws:}" -authtoken "$token" -hostid e2e-compute \
    -fleetid "$fleet_id" -host 127.0.0.1 -port 0 2>>"$tmp/chat.log" &
  chat=$!
  py placement

  echo "== player gateway (dev mode) with curl, on a second chat server"
  "$tmp/chat" -websocketurl "${endpoint/http:/ws:}" -authtoken "$token" -hostid e2e-compute \
    -fleetid "$fleet_id" -host 127.0.0.1 -port 0 2>>"$tmp/chat2.log" &
  chat2=$!
  gateway_smoke
fi

echo "== aws CLI"
cli "list-locations" "custom-e2e" -- list-locations --filters CUSTOM
cli "list-tags-for-resource" "team" -- list-tags-for-resource \
  --resource-arn "arn:aws:gamelift:us-west-2:000000000000:location/custom-e2e"
cli_error "delete-location (missing)" NotFoundException -- delete-location --location-name custom-missing
cli "create-container-group-definition" "READY" -- create-container-group-definition --name e2e-cli-group \
  --operating-system AMAZON_LINUX_2023 --total-memory-limit-mebibytes 512 --total-vcpu-limit 0.25 \
  --game-server-container-definition 'ContainerName=game,ImageUri=registry.example/game:1,ServerSdkVersion=5.2.0,PortConfiguration={ContainerPortRanges=[{FromPort=7777,ToPort=7777,Protocol=UDP}]}'
cli "list-container-group-definitions" "e2e-cli-group" -- list-container-group-definitions
cfleet=$(aws --endpoint-url "$endpoint" --output text gamelift create-container-fleet --fleet-role-arn arn:aws:iam::123456789012:role/e2e \
  --game-server-container-group-definition-name e2e-cli-group --query ContainerFleet.FleetId 2>&1) || true
cli "put-scaling-policy" "buffer" -- put-scaling-policy --fleet-id "$cfleet" --name buffer --policy-type TargetBased \
  --metric-name PercentAvailableGameSessions --target-configuration TargetValue=20
cli "describe-scaling-policies" "PercentAvailableGameSessions" -- describe-scaling-policies --fleet-id "$cfleet"
cli "delete-container-fleet" "" -- delete-container-fleet --fleet-id "$cfleet"
cli "delete-container-group-definition" "" -- delete-container-group-definition --name e2e-cli-group
cli_error "describe-container-group-definition (deleted)" NotFoundException -- describe-container-group-definition --name e2e-cli-group
cli_error "create-location (duplicate)" ConflictException -- create-location --location-name custom-e2e
cli_error "create-location (bad name)" InvalidRequestException -- create-location --location-name not-custom-name
out=$(AWS_SECRET_ACCESS_KEY=wrong aws --endpoint-url "$endpoint" gamelift list-locations 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 255 ] && [[ "$out" == *"An error occurred (InvalidSignatureException)"* ]]; then
  ok "aws with a wrong secret -> InvalidSignatureException"
else
  fail "aws with a wrong secret: status $rc: $out"
fi
out=$(AWS_ACCESS_KEY_ID=AKIDE2EREADER AWS_SECRET_ACCESS_KEY=e2e-reader-secret \
  aws --endpoint-url "$endpoint" gamelift delete-location --location-name custom-e2e 2>&1) && rc=0 || rc=$?
if [ "$rc" -eq 255 ] && [[ "$out" == *"An error occurred (AccessDeniedException) when calling the DeleteLocation operation: User: arn:aws:iam::000000000000:user/AKIDE2EREADER is not authorized to perform: gamelift:DeleteLocation on resource: arn:aws:gamelift:us-west-2:000000000000:location/custom-e2e"* ]]; then
  ok "aws delete-location with a reader's key -> AccessDeniedException"
else
  fail "aws delete-location with a reader's key: status $rc: $out"
fi
# The credentials file is re-read while serving: a key added (within 5 s).
printf 'AKIDE2EADDED e2e-added-secret reader.json\n' >>"$tmp/credentials"
end=$((SECONDS + 10))
while :; do
  out=$(AWS_ACCESS_KEY_ID=AKIDE2EADDED AWS_SECRET_ACCESS_KEY=e2e-added-secret \
    aws --endpoint-url "$endpoint" --output text gamelift list-locations --filters CUSTOM 2>&1) && rc=0 || rc=$?
  if [ "$rc" -eq 0 ] || [ "$SECONDS" -ge "$end" ]; then break; fi
  sleep 0.5
done
if [ "$rc" -eq 0 ] && [[ "$out" == *custom-e2e* ]] && grep -q 'credentials file reloaded.*added=\[AKIDE2EADDED\]' "$tmp/server.log"; then
  ok "a key added to the credentials file is accepted without a restart"
else
  fail "a key added to the credentials file: status $rc: $out"
fi
if [ -n "$fleet_id" ]; then
  cli "describe-fleet-attributes" "$fleet_id" -- describe-fleet-attributes --fleet-ids "$fleet_id"
  cli "describe-fleet-location-attributes" "custom-e2e" -- describe-fleet-location-attributes --fleet-id "$fleet_id"
  cli "list-compute" "e2e-compute" -- list-compute --fleet-id "$fleet_id"
  cli "list-compute --compute-status ACTIVE" "e2e-compute" -- list-compute --fleet-id "$fleet_id" --compute-status ACTIVE
  cli "describe-compute (Active, agent endpoint)" "Active $endpoint" -- describe-compute --fleet-id "$fleet_id" \
    --compute-name e2e-compute --query 'Compute.[ComputeStatus,GameLiftAgentEndpoint]'
  cli "describe-runtime-configuration" "/local/game/server" -- describe-runtime-configuration --fleet-id "$fleet_id"
  # Auto-pagination over pages of one: the three ctf sessions, newest first.
  cli "search-game-sessions (filter, sort, pages of 1)" 'e2e-4 e2e-2 e2e-0' -- search-game-sessions \
    --fleet-id "$fleet_id" --filter-expression "gameSessionProperties.mode = 'ctf'" \
    --sort-expression "creationTimeMillis DESC" --page-size 1 --query 'GameSessions[].Name'
  cli "search-game-sessions (hasAvailablePlayerSessions)" "e2e-1" -- search-game-sessions \
    --fleet-id "$fleet_id" --filter-expression "hasAvailablePlayerSessions=true AND maximumSessions >= 8"
  cli "describe-game-sessions" "ACTIVE" -- describe-game-sessions --fleet-id "$fleet_id" --page-size 2
  cli_error "describe-fleet-capacity (bad id)" InvalidRequestException -- describe-fleet-capacity --fleet-ids "no such fleet"
fi

# same NAME -- ARGS...: "anylift ARGS" and "aws gamelift ARGS" print the
# same stdout and stderr; anylift exits 254 where aws (version 1) exits 255.
same() {
  local name=$1
  shift 2
  local arc=0 lrc=0
  aws --endpoint-url "$endpoint" gamelift "$@" >"$tmp/aws.out" 2>"$tmp/aws.err" || arc=$?
  "$tmp/anylift" --endpoint-url "$endpoint" "$@" >"$tmp/anylift.out" 2>"$tmp/anylift.err" || lrc=$?
  if [ "$arc" -eq 255 ] && [ "$lrc" -eq 254 ]; then lrc=255; fi
  if [ "$arc" -eq "$lrc" ] && cmp -s "$tmp/aws.out" "$tmp/anylift.out" && cmp -s "$tmp/aws.err" "$tmp/anylift.err"; then
    ok "anylift $name = aws"
  else
    fail "anylift $name (status $lrc) differs from aws (status $arc): $(diff "$tmp/aws.out" "$tmp/anylift.out"; diff "$tmp/aws.err" "$tmp/anylift.err")"
  fi
}

echo "== anylift CLI against the aws CLI"
same "list-locations" -- list-locations
same "list-locations (table)" -- list-locations --output table
same "create-location (duplicate)" -- create-location --location-name custom-e2e
same "delete-location (missing)" -- delete-location --location-name custom-missing
if "$tmp/anylift" --endpoint-url "$endpoint" create-location --location-name custom-cli --tags Key=made-by,Value=anylift >/dev/null; then
  cli "anylift create-location, seen by aws" "custom-cli" -- list-locations --filters CUSTOM
  same "list-tags-for-resource (of anylift's location)" -- list-tags-for-resource \
    --resource-arn "arn:aws:gamelift:us-west-2:000000000000:location/custom-cli"
  out=$("$tmp/anylift" --endpoint-url "$endpoint" delete-location --location-name custom-cli 2>&1) && rc=0 || rc=$?
  if [ "$rc" -eq 0 ] && [ -z "$out" ]; then ok "anylift delete-location (no output, as aws)"; else fail "anylift delete-location: status $rc: $out"; fi
  same "delete-location (deleted by anylift)" -- delete-location --location-name custom-cli
else
  fail "anylift create-location"
fi
if [ -n "$fleet_id" ]; then
  same "describe-fleet-attributes" -- describe-fleet-attributes --fleet-ids "$fleet_id"
  same "describe-fleet-attributes (table)" -- describe-fleet-attributes --fleet-ids "$fleet_id" --output table
  same "describe-fleet-attributes (text)" -- describe-fleet-attributes --fleet-ids "$fleet_id" --output text
  same "list-compute" -- list-compute --fleet-id "$fleet_id"
  same "describe-runtime-configuration" -- describe-runtime-configuration --fleet-id "$fleet_id"
  same "describe-game-sessions" -- describe-game-sessions --fleet-id "$fleet_id"
  same "describe-game-sessions (table)" -- describe-game-sessions --fleet-id "$fleet_id" --output table
  same "search-game-sessions" -- search-game-sessions --fleet-id "$fleet_id" \
    --filter-expression "gameSessionProperties.mode = 'ctf'" --sort-expression "creationTimeMillis DESC"
  same "describe-game-sessions (pages of 2, at most 5, text)" -- describe-game-sessions --fleet-id "$fleet_id" \
    --page-size 2 --max-items 5 --output text
  same "search-game-sessions (pages of 1, at most 2)" -- search-game-sessions --fleet-id "$fleet_id" --page-size 1 --max-items 2
  same "describe-fleet-utilization" -- describe-fleet-utilization --fleet-ids "$fleet_id"
  same "describe-fleet-capacity (bad id)" -- describe-fleet-capacity --fleet-ids "no such fleet"
  # --query, applied before the output format (and to each page of text).
  same "--query a scalar, text" -- describe-fleet-attributes --fleet-ids "$fleet_id" \
    --query 'FleetAttributes[0].FleetId' --output text
  same "--query a number" -- describe-fleet-attributes --fleet-ids "$fleet_id" --query 'FleetAttributes[0].CreationTime'
  same "--query a field of a list (null)" -- describe-fleet-attributes --fleet-ids "$fleet_id" \
    --query FleetAttributes.FleetId --output text
  same "--query a projection" -- describe-game-sessions --fleet-id "$fleet_id" --query 'GameSessions[].GameSessionId'
  hash='GameSessions[].{Name: Name, Id: GameSessionId, Max: MaximumPlayerSessionCount, Props: GameProperties}'
  same "--query a multi-select hash" -- describe-game-sessions --fleet-id "$fleet_id" --query "$hash"
  same "--query a multi-select hash, text" -- describe-game-sessions --fleet-id "$fleet_id" --query "$hash" --output text
  same "--query a multi-select hash, table" -- describe-game-sessions --fleet-id "$fleet_id" --query "$hash" --output table
  same "--query a multi-select list, text" -- describe-game-sessions --fleet-id "$fleet_id" \
    --query 'GameSessions[].[Name, Status, CurrentPlayerSessionCount]' --output text
  same "--query a filter and functions" -- describe-game-sessions --fleet-id "$fleet_id" \
    --query '{n: length(GameSessions), big: sort(GameSessions[?MaximumPlayerSessionCount > `4`].Name), first: sort_by(GameSessions, &Name)[0].[Name, to_string(GameProperties), keys(@)]}'
  same "--query over pages, text" -- describe-game-sessions --fleet-id "$fleet_id" --page-size 2 --max-items 5 \
    --query 'GameSessions[].Name' --output text
  same "--query over pages, json" -- describe-game-sessions --fleet-id "$fleet_id" --page-size 2 --max-items 5 \
    --query '[GameSessions[].Name, NextToken]'
  same "--query over pages, table" -- describe-game-sessions --fleet-id "$fleet_id" --page-size 4 \
    --query 'GameSessions[].[Name, Status]' --output table
fi
# An invalid --query is refused before anything is sent: exit 252 (the aws
# CLI version 2's status; version 1 exits 255), worded as the aws CLI words it.
out=$("$tmp/anylift" --endpoint-url "$endpoint" list-locations --query 'Locations[' 2>&1) && rc=0 || rc=$?
aws_out=$(aws --endpoint-url "$endpoint" gamelift list-locations --query 'Locations[' 2>&1) || true
if [ "$rc" -eq 252 ] && [[ "$out" == *"Bad value for --query Locations[: Invalid jmespath expression: "* ]] &&
  [[ "$aws_out" == *"Bad value for --query Locations[: Invalid jmespath expression: "* ]]; then
  ok "anylift --query with a syntax error -> 252, as aws words it"
else
  fail "anylift --query with a syntax error: status $rc: $out (aws: $aws_out)"
fi

echo "== anylift backup of the running server, restored and served by a second one"
if "$tmp/anylift" backup --data-dir "$tmp/data" "$tmp/backup.db" >"$tmp/backup.out" 2>&1 &&
  "$tmp/anylift" restore "$tmp/backup.db" --data-dir "$tmp/restored" >>"$tmp/backup.out" 2>&1; then
  ok "anylift backup and restore while the server runs"
  "$tmp/anylift" serve --listen 127.0.0.1:0 --tls-listen "" --data-dir "$tmp/restored" \
    --access-key "$AWS_ACCESS_KEY_ID" --secret-key "$AWS_SECRET_ACCESS_KEY" >"$tmp/restored.out" 2>>"$tmp/server.log" &
  rpid=$!
  for _ in $(seq 1 100); do
    if grep -q '^console at ' "$tmp/restored.out" || ! kill -0 "$rpid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  rendpoint=$(sed -n 's/^anylift listening on //p' "$tmp/restored.out")
  for q in "list-locations --query Locations[].LocationName" "list-fleets" "list-aliases --query Aliases[].AliasId"; do
    # shellcheck disable=SC2086
    if [ -n "$rendpoint" ] && [ "$(aws --endpoint-url "$endpoint" --output text gamelift $q 2>&1)" = \
      "$(aws --endpoint-url "$rendpoint" --output text gamelift $q 2>&1)" ]; then
      ok "the restored store answers ${q%% *} as the original"
    else
      fail "the restored store differs on ${q%% *} ($rendpoint)"
    fi
  done
  kill -TERM "$rpid"
  wait "$rpid" || true
else
  fail "anylift backup/restore: $(cat "$tmp/backup.out")"
fi

echo "== boto3: cleanup"
py cleanup

stop_server

# ---- anylift dev: the real binary on a temp data dir, driven by what it
# prints, with two chat servers run by its agent.
devpid=""
start_dev() {
  : >"$tmp/dev.out"
  "$tmp/anylift" dev --listen 127.0.0.1:0 --tls-listen "" --data-dir "$tmp/devdata" "$@" \
    >"$tmp/dev.out" 2>>"$tmp/dev.log" &
  devpid=$!
  for _ in $(seq 1 100); do
    if grep -q '^Press Ctrl-C to stop.$' "$tmp/dev.out"; then break; fi
    if ! kill -0 "$devpid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  devendpoint=$(sed -n 's/^  export AWS_ENDPOINT_URL_GAMELIFT=//p' "$tmp/dev.out")
  devfleet=$(sed -n 's/^Fleet \(fleet-[^ ]*\) (ANYWHERE).*/\1/p' "$tmp/dev.out")
  if [ -n "$devendpoint" ] && [ -n "$devfleet" ]; then
    ok "anylift dev${*:+ $*} printed its block ($devendpoint, $devfleet)"
  else
    fail "anylift dev $*: no block: $(cat "$tmp/dev.out" "$tmp/dev.log")"
  fi
}
stop_dev() {
  kill -INT "$devpid"
  local rc=0
  wait "$devpid" || rc=$?
  devpid=""
  if [ "$rc" -eq 0 ]; then ok "anylift dev stops with exit 0 on SIGINT"; else fail "anylift dev exit status $rc on SIGINT"; fi
}
# dev_aws / dev_anylift: the clients with only what the block says to set
# (anylift needs not even the key pair for a local endpoint).
dev_aws() {
  AWS_ACCESS_KEY_ID=anylift AWS_SECRET_ACCESS_KEY=anylift AWS_DEFAULT_REGION=us-west-2 \
    AWS_ENDPOINT_URL_GAMELIFT="$devendpoint" aws gamelift "$@"
}
dev_anylift() {
  env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_ENDPOINT_URL_GAMELIFT="$devendpoint" "$tmp/anylift" "$@"
}
# until_out WANT CMD...: reruns CMD (for at most 20 s) until its output contains WANT.
until_out() {
  local want=$1 out="" end=$((SECONDS + 20))
  shift
  while [ "$SECONDS" -lt "$end" ]; do
    out=$("$@" 2>&1 || true)
    if [[ "$out" == *"$want"* ]]; then return 0; fi
    sleep 0.2
  done
  echo "$out" >&2
  return 1
}

echo "== anylift dev --launch chat --count 2"
start_dev --launch "$tmp/chat" --count 2 -- -host 127.0.0.1 -port 0
if [ -n "$devfleet" ]; then
  first_fleet=$devfleet
  if until_out "$devfleet	2" dev_aws describe-fleet-utilization --fleet-ids "$devfleet" --output text \
    --query 'FleetUtilization[0].[FleetId,ActiveServerProcessCount]' ; then
    ok "the agent runs 2 chat servers"
  else
    fail "2 chat servers never became active"
  fi
  gs=$(dev_anylift create-game-session --fleet-id "$devfleet" --location custom-local \
    --maximum-player-session-count 4 --name e2e-dev --output text 2>&1 | awk '$1 == "GAMESESSION" {for (i = 1; i <= NF; i++) if ($i ~ /^arn:aws:gamelift:.*gamesession/) print $i}') || true
  if [ -n "$gs" ]; then ok "anylift create-game-session without credentials: $gs"; else fail "anylift create-game-session"; fi
  if until_out ACTIVE dev_aws describe-game-sessions --game-session-id "$gs" --query 'GameSessions[0].Status' --output text; then
    ok "the game session is ACTIVE"
  else
    fail "the game session never became ACTIVE"
  fi
  ps=$(dev_aws create-player-session --game-session-id "$gs" --player-id e2e-player --query 'PlayerSession.PlayerSessionId' --output text 2>&1) || true
  port=$(dev_aws describe-game-sessions --game-session-id "$gs" --query 'GameSessions[0].Port' --output text 2>&1) || true
  if [[ "$ps" == psess-* ]]; then ok "aws create-player-session: $ps"; else fail "aws create-player-session: $ps"; fi
  # A client connects and stays connected while the player session is seen ACTIVE.
  python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall((sys.argv[2] + "\n").encode())
print(s.makefile().readline().strip(), flush=True)
time.sleep(30)
' "$port" "$ps" >"$tmp/client.out" 2>&1 &
  client=$!
  if until_out ACTIVE dev_anylift describe-player-sessions --player-session-id "$ps" --output text; then
    ok "anylift describe-player-sessions: the connected player is ACTIVE"
  else
    fail "the player session never became ACTIVE ($(cat "$tmp/client.out"))"
  fi
  if [ "$(head -n1 "$tmp/client.out")" = "OK" ]; then ok "the chat server accepted the player"; else fail "chat answered: $(cat "$tmp/client.out")"; fi
  kill "$client" 2>/dev/null || true
  wait "$client" 2>/dev/null || true
  # As the O3DE gem asks: no Location. The dev fleet has one, so it is used;
  # the answer, as GameLift's, does not name the compute.
  out=$(dev_aws create-game-session --fleet-id "$devfleet" --maximum-player-session-count 2 \
    --idempotency-token e2e-o3de --query 'GameSession.[Location,ComputeName]' --output text 2>&1) || true
  if [ "$out" = "custom-local	None" ]; then ok "aws create-game-session without --location"; else fail "aws create-game-session without --location: $out"; fi
  stop_dev
  echo "== anylift dev again, on the same data dir"
  start_dev
  if [ "$devfleet" = "$first_fleet" ]; then ok "a restart keeps fleet $devfleet"; else fail "fleet $first_fleet became $devfleet"; fi
  cli_dev_gs=$(dev_aws describe-game-sessions --game-session-id "$gs" --query 'GameSessions[0].Name' --output text 2>&1) || true
  if [ "$cli_dev_gs" = "e2e-dev" ]; then ok "a restart keeps the game session"; else fail "after a restart: $cli_dev_gs"; fi
  stop_dev
fi

echo "== $passed passed, $failed failed"
[ "$failed" -eq 0 ]
