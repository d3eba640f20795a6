"""End-to-end checks of a running Anylift with boto3 (AWS JSON 1.1).

Usage: e2e.py ENDPOINT STATE_FILE setup|main|placement|cleanup

setup creates a location, an Anywhere fleet in it, a compute, aliases and
tags, and writes the ids it made to STATE_FILE (JSON). The run script then
stops the server, seeds ACTIVE game sessions into its store, restarts it,
and runs main, which describes, lists and searches everything, creates
player sessions, and checks that errors arrive as the right classes, and
that keys with limited rights and rates are refused and throttled.
placement creates a queue and places a game session through it on the
chat example game server the run script starts on the compute, with a
webhook receiver on 127.0.0.1 as the queue's NotificationTarget and a
GET /events reader opened first: both must get the signed PlacementFulfilled
(E2E_WEBHOOK_SECRET is the server's --webhook-secret). After the
CLI checks, cleanup deregisters and deletes what setup made.

Each check prints "ok" or "FAIL" with its name; the exit status is the
number of failed checks (capped at 100). Standard library and boto3 only.
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import queue
import sys
import threading
import time
import traceback
import urllib.request

import boto3
import botocore.config
import botocore.exceptions

LOCATION = "custom-e2e"
REGION = "us-west-2"


class Checks:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def run(self, name, fn):
        """Runs fn; an exception or a false assertion fails the check."""
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported
            self.failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
            if os.environ.get("E2E_TRACE"):
                traceback.print_exc()
            return None
        self.passed += 1
        print(f"ok   {name}", flush=True)
        return result


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def raises(client, exc_name, fn, *args, **kwargs):
    """Checks that fn raises the modeled exception class exc_name."""
    exc = getattr(client.exceptions, exc_name)
    try:
        fn(*args, **kwargs)
    except exc as e:
        expect(e.response["Error"]["Message"], f"{exc_name} without a message")
        return e
    raise AssertionError(f"no {exc_name}")


def client(endpoint, key=None, secret=None):
    return boto3.client(
        "gamelift",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=key or os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=secret or os.environ["AWS_SECRET_ACCESS_KEY"],
        config=botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"}),
    )


# ---- setup: before game sessions are seeded ----------------------------


def setup(gl, c, state):
    loc = c.run("CreateLocation", lambda: gl.create_location(
        LocationName=LOCATION, Tags=[{"Key": "team", "Value": "e2e"}])["Location"])
    if loc:
        state["location_arn"] = loc["LocationArn"]
        c.run("CreateLocation answers the ARN", lambda: expect(
            loc["LocationArn"].endswith(":location/" + LOCATION), loc))
    c.run("duplicate CreateLocation -> ConflictException",
          lambda: raises(gl, "ConflictException", gl.create_location, LocationName=LOCATION))
    c.run("bad LocationName -> InvalidRequestException naming the member", lambda: expect(
        "locationName" in str(raises(gl, "InvalidRequestException", gl.create_location,
                                     LocationName="not-custom-location")), "message"))
    c.run("ListLocations (CUSTOM) shows it", lambda: expect(
        LOCATION in [l["LocationName"] for l in gl.list_locations(Filters=["CUSTOM"])["Locations"]], "missing"))

    fleet = c.run("CreateFleet ANYWHERE in the custom location", lambda: gl.create_fleet(
        Name="e2e-fleet", ComputeType="ANYWHERE", Locations=[{"Location": LOCATION}],
        Description="end to end", Tags=[{"Key": "team", "Value": "e2e"}])["FleetAttributes"])
    if not fleet:
        return
    state["fleet_id"], state["fleet_arn"] = fleet["FleetId"], fleet["FleetArn"]
    c.run("new Anywhere fleet is ACTIVE", lambda: expect(fleet["Status"] == "ACTIVE", fleet["Status"]))
    c.run("fleet is ANYWHERE", lambda: expect(fleet["ComputeType"] == "ANYWHERE", fleet))

    compute = c.run("RegisterCompute", lambda: gl.register_compute(
        FleetId=state["fleet_id"], ComputeName="e2e-compute", IpAddress="127.0.0.1",
        Location=LOCATION)["Compute"])
    if compute:
        c.run("compute is in the location", lambda: expect(compute["Location"] == LOCATION, compute))
        # GameLift answers "Active" (not the model's ACTIVE) and the agent's endpoint.
        c.run("RegisterCompute answers ComputeStatus Active and GameLiftAgentEndpoint", lambda: expect(
            compute["ComputeStatus"] == "Active" and compute["GameLiftAgentEndpoint"] == gl.meta.endpoint_url, compute))
        c.run("DescribeCompute answers Active", lambda: expect(gl.describe_compute(
            FleetId=state["fleet_id"], ComputeName="e2e-compute")["Compute"]["ComputeStatus"] == "Active", "status"))
        for status in ("ACTIVE", "Active"):
            c.run(f"ListCompute ComputeStatus={status} finds it", lambda: expect([
                x["ComputeStatus"] for x in gl.list_compute(FleetId=state["fleet_id"], ComputeStatus=status)["ComputeList"]
            ] == ["Active"], "list"))
    tok = c.run("GetComputeAuthToken", lambda: gl.get_compute_auth_token(
        FleetId=state["fleet_id"], ComputeName="e2e-compute"))
    if tok:
        c.run("auth token is long and expires in about 15 minutes", lambda: expect(
            len(tok["AuthToken"]) >= 20 and
            600 < tok["ExpirationTimestamp"].timestamp() - time.time() <= 15 * 60 + 5, tok))

    alias = c.run("CreateAlias SIMPLE", lambda: gl.create_alias(
        Name="e2e-simple", RoutingStrategy={"Type": "SIMPLE", "FleetId": state["fleet_id"]})["Alias"])
    if alias:
        state["alias_id"] = alias["AliasId"]
    terminal = c.run("CreateAlias TERMINAL", lambda: gl.create_alias(
        Name="e2e-terminal", RoutingStrategy={"Type": "TERMINAL", "Message": "game over"})["Alias"])
    if terminal:
        state["terminal_alias_id"] = terminal["AliasId"]


# ---- main: after game sessions are seeded -------------------------------


def describe_fleets(gl, c, state):
    fid = state["fleet_id"]
    c.run("DescribeFleetAttributes", lambda: expect(
        gl.describe_fleet_attributes(FleetIds=[fid])["FleetAttributes"][0]["FleetId"] == fid, "fleet"))
    c.run("ListFleets", lambda: expect(fid in gl.list_fleets()["FleetIds"], "missing"))
    c.run("DescribeFleetLocationAttributes", lambda: expect(
        LOCATION in [a["LocationState"]["Location"] for a in
                     gl.describe_fleet_location_attributes(FleetId=fid)["LocationAttributes"]], "missing"))
    c.run("DescribeFleetEvents", lambda: expect(
        len(gl.describe_fleet_events(FleetId=fid)["Events"]) >= 1, "no events"))
    c.run("UpdateRuntimeConfiguration", lambda: gl.update_runtime_configuration(
        FleetId=fid, RuntimeConfiguration={"ServerProcesses": [
            {"LaunchPath": "/local/game/server", "Parameters": "-port 7777", "ConcurrentExecutions": 2}]}))
    c.run("DescribeRuntimeConfiguration", lambda: expect(
        gl.describe_runtime_configuration(FleetId=fid)["RuntimeConfiguration"]["ServerProcesses"][0]
        ["ConcurrentExecutions"] == 2, "runtime configuration"))
    # The home Region only: the seeded sessions are in a custom location.
    c.run("DescribeFleetUtilization", lambda: expect(
        isinstance(gl.describe_fleet_utilization(FleetIds=[fid])["FleetUtilization"][0]["ActiveGameSessionCount"], int),
        "utilization"))
    c.run("DescribeFleetCapacity", lambda: expect(
        gl.describe_fleet_capacity(FleetIds=[fid])["FleetCapacity"][0]["FleetId"] == fid, "capacity"))
    c.run("UpdateFleetAttributes", lambda: gl.update_fleet_attributes(FleetId=fid, Description="updated"))
    c.run("DescribeCompute", lambda: expect(
        gl.describe_compute(FleetId=fid, ComputeName="e2e-compute")["Compute"]["ComputeName"] == "e2e-compute",
        "compute"))
    c.run("ListCompute", lambda: expect(
        [x["ComputeName"] for x in gl.list_compute(FleetId=fid)["ComputeList"]] == ["e2e-compute"], "list"))


def aliases(gl, c, state):
    aid, tid = state.get("alias_id"), state.get("terminal_alias_id")
    c.run("ListAliases", lambda: expect({aid, tid} <= {a["AliasId"] for a in gl.list_aliases()["Aliases"]}, "missing"))
    c.run("DescribeAlias", lambda: expect(gl.describe_alias(AliasId=aid)["Alias"]["Name"] == "e2e-simple", "alias"))
    c.run("ResolveAlias SIMPLE", lambda: expect(gl.resolve_alias(AliasId=aid)["FleetId"] == state["fleet_id"], "fleet"))
    c.run("ResolveAlias TERMINAL -> TerminalRoutingStrategyException with its message", lambda: expect(
        "game over" in str(raises(gl, "TerminalRoutingStrategyException", gl.resolve_alias, AliasId=tid)), "message"))
    c.run("UpdateAlias", lambda: gl.update_alias(AliasId=aid, Description="simple alias"))
    c.run("DescribeAlias of a missing alias -> NotFoundException",
          lambda: raises(gl, "NotFoundException", gl.describe_alias, AliasId="alias-00000000-0000-0000-0000-000000000000"))


def search(gl, c, state):
    fid = state["fleet_id"]
    c.run("DescribeGameSessions lists the seeded sessions", lambda: expect(
        len(gl.describe_game_sessions(FleetId=fid)["GameSessions"]) == len(state["sessions"]), "count"))
    c.run("DescribeGameSessionDetails", lambda: expect(
        len(gl.describe_game_session_details(FleetId=fid)["GameSessionDetails"]) == len(state["sessions"]), "count"))
    c.run("DescribeGameSessions by id", lambda: expect(
        gl.describe_game_sessions(GameSessionId=state["sessions"][0])["GameSessions"][0]["Status"] == "ACTIVE", "status"))
    ctf = c.run("SearchGameSessions with a property filter, sorted", lambda: gl.search_game_sessions(
        FleetId=fid, FilterExpression="gameSessionProperties.mode = 'ctf'",
        SortExpression="gameSessionProperties.level DESC")["GameSessions"])
    if ctf is not None:
        c.run("... finds the ctf sessions in order", lambda: expect(
            [s["Name"] for s in ctf] == [n for n in ["e2e-4", "e2e-2", "e2e-0"] if n in state["names"]], [s["Name"] for s in ctf]))
    pages = c.run("SearchGameSessions paginated (Limit 2)", lambda: list(
        gl.get_paginator("search_game_sessions").paginate(
            FleetId=fid, SortExpression="creationTimeMillis ASC", PaginationConfig={"PageSize": 2})))
    if pages is not None:
        names = [s["Name"] for p in pages for s in p["GameSessions"]]
        c.run("... every session once, oldest first", lambda: expect(names == state["names"], names))
        c.run("... in pages of at most 2", lambda: expect(all(len(p["GameSessions"]) <= 2 for p in pages), pages))
    c.run("SearchGameSessions with a bad filter -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.search_game_sessions, FleetId=fid, FilterExpression="mode = = 'x'"))
    c.run("SearchGameSessions through the alias", lambda: expect(
        len(gl.search_game_sessions(AliasId=state["alias_id"])["GameSessions"]) == len(state["sessions"]), "count"))


def players(gl, c, state):
    full = state["sessions"][0]  # two seats
    one = c.run("CreatePlayerSession", lambda: gl.create_player_session(
        GameSessionId=full, PlayerId="player-1", PlayerData="hello")["PlayerSession"])
    if one:
        c.run("... is RESERVED", lambda: expect(one["Status"] == "RESERVED", one))
        c.run("DescribePlayerSessions by id", lambda: expect(
            gl.describe_player_sessions(PlayerSessionId=one["PlayerSessionId"])["PlayerSessions"][0]["PlayerId"] == "player-1",
            "player"))
    c.run("CreatePlayerSessions fills the last seat", lambda: gl.create_player_sessions(
        GameSessionId=full, PlayerIds=["player-2"], PlayerDataMap={"player-2": "x"}))
    c.run("a third player -> GameSessionFullException", lambda: raises(
        gl, "GameSessionFullException", gl.create_player_session, GameSessionId=full, PlayerId="player-3"))
    c.run("DescribePlayerSessions by game session", lambda: expect(
        sorted(p["PlayerId"] for p in gl.describe_player_sessions(GameSessionId=full)["PlayerSessions"]) ==
        ["player-1", "player-2"], "players"))
    c.run("SearchGameSessions hasAvailablePlayerSessions=true skips the full session", lambda: expect(
        full not in [s["GameSessionId"] for s in gl.search_game_sessions(
            FleetId=state["fleet_id"], FilterExpression="hasAvailablePlayerSessions=true")["GameSessions"]], "full session found"))
    c.run("CreatePlayerSession on a missing session -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.create_player_session,
        GameSessionId=full.rsplit("/", 1)[0] + "/gsess-missing", PlayerId="p"))
    last = state["sessions"][-1]
    c.run("UpdateGameSession", lambda: expect(gl.update_game_session(
        GameSessionId=last, Name="renamed")["GameSession"]["Name"] == "renamed", "name"))
    # Anywhere without the Agent: the process is asked to end the session.
    c.run("TerminateGameSession", lambda: expect(gl.terminate_game_session(
        GameSessionId=last, TerminationMode="TRIGGER_ON_PROCESS_TERMINATE")["GameSession"]["Status"]
        in ("TERMINATING", "TERMINATED"), "status"))


def tags(gl, c, state):
    arn = state["location_arn"]
    c.run("TagResource", lambda: gl.tag_resource(ResourceARN=arn, Tags=[{"Key": "stage", "Value": "test"}]))
    c.run("ListTagsForResource", lambda: expect(
        {t["Key"]: t["Value"] for t in gl.list_tags_for_resource(ResourceARN=arn)["Tags"]} ==
        {"team": "e2e", "stage": "test"}, "tags"))
    c.run("UntagResource", lambda: gl.untag_resource(ResourceARN=arn, TagKeys=["stage"]))
    c.run("tags after untag", lambda: expect(
        [t["Key"] for t in gl.list_tags_for_resource(ResourceARN=arn)["Tags"]] == ["team"], "tags"))
    if state.get("fleet_arn"):
        c.run("fleet tags", lambda: expect(
            gl.list_tags_for_resource(ResourceARN=state["fleet_arn"])["Tags"] == [{"Key": "team", "Value": "e2e"}], "tags"))


def auth(endpoint, c):
    def code_of(fn):
        try:
            fn()
        except botocore.exceptions.ClientError as e:
            return e.response["Error"]["Code"]
        return None
    bad = client(endpoint, secret="wrong-secret")
    c.run("wrong secret -> ClientError InvalidSignatureException", lambda: expect(
        code_of(bad.list_locations) == "InvalidSignatureException", code_of(bad.list_locations)))
    unknown = client(endpoint, key="AKIDUNKNOWNE2E", secret="x")
    c.run("unknown key -> ClientError UnrecognizedClientException", lambda: expect(
        code_of(unknown.list_locations) == "UnrecognizedClientException", "code"))


# Keys of the run script's --credentials-file: a reader (Describe*, List*
# and Search* on *) and a key limited to one request per 1,000 s.
READER = ("AKIDE2EREADER", "e2e-reader-secret")
SLOW = ("AKIDE2ESLOW", "e2e-slow-secret")


def rights(endpoint, c, state):
    """AccessDeniedException for what a key's policy does not allow, and
    ThrottlingException beyond a key's rate, which botocore retries."""
    def error_of(fn, **kwargs):
        try:
            fn(**kwargs)
        except botocore.exceptions.ClientError as e:
            return e.response
        return None
    reader = client(endpoint, *READER)
    c.run("a reader's key describes", lambda: reader.list_locations())
    r = error_of(reader.create_location, LocationName="custom-denied")
    want = ("User: arn:aws:iam::000000000000:user/AKIDE2EREADER is not authorized to perform: "
            "gamelift:CreateLocation on resource: arn:aws:gamelift:us-west-2:000000000000:location/custom-denied "
            "because no identity-based policy allows the gamelift:CreateLocation action")
    c.run("a reader's CreateLocation -> ClientError AccessDeniedException (400)", lambda: expect(
        r and r["Error"]["Code"] == "AccessDeniedException" and r["ResponseMetadata"]["HTTPStatusCode"] == 400
        and r["Error"]["Message"] == want, r))
    slow = boto3.client(
        "gamelift", endpoint_url=endpoint, region_name=REGION,
        aws_access_key_id=SLOW[0], aws_secret_access_key=SLOW[1],
        config=botocore.config.Config(retries={"total_max_attempts": 2, "mode": "standard"}))
    c.run("a slow key's first request", lambda: slow.list_fleets())
    r = error_of(slow.list_fleets)
    c.run("its second -> ThrottlingException (400), retried once by botocore", lambda: expect(
        r and r["Error"]["Code"] == "ThrottlingException" and r["ResponseMetadata"]["HTTPStatusCode"] == 400
        and r["ResponseMetadata"]["RetryAttempts"] == 1, r))


def tls_same_port(endpoint, c):
    """The API port speaks TLS too: boto3 over https:// to the same port
    (the certificate is self-signed, so unverified here)."""
    import urllib3
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    tls = boto3.client(
        "gamelift",
        endpoint_url=endpoint.replace("http://", "https://", 1),
        region_name=REGION,
        aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"],
        verify=False,
        config=botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"}),
    )
    c.run("ListLocations over TLS on the API port", lambda: expect(
        "Locations" in tls.list_locations(), "Locations"))


def errors(gl, c):
    c.run("DeleteLocation of a missing location -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.delete_location, LocationName="custom-missing"))
    c.run("DescribeFleetAttributes with a bad id -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.describe_fleet_attributes, FleetIds=["not a fleet"]))
    c.run("ListLocations with Limit 500 -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.list_locations, Limit=500))


class Webhook:
    """A webhook receiver on 127.0.0.1: each POST's headers and body go to
    a queue, answered 204."""

    def __init__(self):
        got = self.got = queue.Queue()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                got.put((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/e2e-hook" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class EventStream:
    """GET /events with HTTP Basic (the e2e credentials), read on a
    thread: each event as (id, type, data) goes to a queue."""

    def __init__(self, endpoint):
        self.got = queue.Queue()
        cred = base64.b64encode(("%s:%s" % (os.environ["AWS_ACCESS_KEY_ID"],
                                            os.environ["AWS_SECRET_ACCESS_KEY"])).encode()).decode()
        req = urllib.request.Request(endpoint + "/events", headers={"Authorization": "Basic " + cred})
        self.resp = urllib.request.urlopen(req, timeout=60)
        self.first = self.resp.readline().decode().strip()  # the connected comment
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        frame = {}
        try:
            for raw in self.resp:
                line = raw.decode().rstrip("\n")
                if line == "":
                    if "event" in frame:
                        self.got.put((frame.get("id"), frame["event"], frame.get("data", "")))
                    frame = {}
                    continue
                k, _, v = line.partition(":")
                if k:
                    frame[k] = frame.get(k, "") + v[1:] if v.startswith(" ") else frame.get(k, "") + v
        except Exception:
            pass

    def close(self):
        self.resp.close()


def wait_for(q, match, what):
    """Takes items off q until match(item); a bound of 20 s, not a wait."""
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            item = q.get(timeout=max(0.1, deadline - time.time()))
        except queue.Empty:
            break
        if match(item):
            return item
    raise AssertionError("no %s within 20 s" % what)


def placement(gl, c, state, endpoint):
    """Runs while the run script's chat game server is up on the compute."""
    hook = Webhook()
    try:
        placement_with(gl, c, state, endpoint, hook)
    finally:
        hook.close()


def placement_with(gl, c, state, endpoint, hook):
    fid = state["fleet_id"]
    q = c.run("CreateGameSessionQueue with a webhook target", lambda: gl.create_game_session_queue(
        Name="e2e-queue", Destinations=[{"DestinationArn": state["fleet_arn"]}], TimeoutInSeconds=60,
        NotificationTarget=hook.url)["GameSessionQueue"])
    if not q:
        return
    stream = c.run("GET /events with HTTP Basic", lambda: EventStream(endpoint))
    if not stream:
        return
    c.run("... its ARN names the queue", lambda: expect(
        q["GameSessionQueueArn"].endswith(":gamesessionqueue/e2e-queue"), q))
    c.run("DescribeGameSessionQueues by name", lambda: expect(
        [x["Name"] for x in gl.describe_game_session_queues(Names=["e2e-queue"])["GameSessionQueues"]] == ["e2e-queue"], "queues"))
    c.run("CreateGameSessionQueue with an unknown fleet -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.create_game_session_queue, Name="e2e-bad",
        Destinations=[{"DestinationArn": fid[:-4] + "0000"}]))
    started = c.run("StartGameSessionPlacement", lambda: gl.start_game_session_placement(
        PlacementId="e2e-placement-1", GameSessionQueueName="e2e-queue", MaximumPlayerSessionCount=4,
        GameSessionName="e2e-placed", DesiredPlayerSessions=[{"PlayerId": "e2e-player", "PlayerData": "hi"}],
        PlayerLatencies=[{"PlayerId": "e2e-player", "RegionIdentifier": LOCATION, "LatencyInMilliseconds": 20.5}],
    )["GameSessionPlacement"])
    if not started:
        return
    c.run("... answers PENDING", lambda: expect(started["Status"] == "PENDING", started["Status"]))
    c.run("override with latencies -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.start_game_session_placement, PlacementId="e2e-placement-2",
        GameSessionQueueName="e2e-queue", MaximumPlayerSessionCount=2,
        PlayerLatencies=[{"PlayerId": "p", "RegionIdentifier": LOCATION, "LatencyInMilliseconds": 1}],
        PriorityConfigurationOverride={"LocationOrder": [LOCATION]}))

    def fulfilled():
        deadline = time.time() + 20
        while time.time() < deadline:
            p = gl.describe_game_session_placement(PlacementId="e2e-placement-1")["GameSessionPlacement"]
            if p["Status"] != "PENDING":
                return p
            time.sleep(0.1)
        raise AssertionError("still PENDING after 20 s")
    p = c.run("DescribeGameSessionPlacement until FULFILLED", fulfilled)
    if not p:
        return
    c.run("... FULFILLED with connection details and the seat", lambda: expect(
        p["Status"] == "FULFILLED" and p["IpAddress"] == "127.0.0.1" and p["Port"] > 0 and
        p["GameSessionRegion"] == LOCATION and p["EndTime"] >= p["StartTime"] and
        [x["PlayerId"] for x in p["PlacedPlayerSessions"]] == ["e2e-player"], p))
    c.run("... its game session is ACTIVE", lambda: expect(gl.describe_game_sessions(
        GameSessionId=p["GameSessionArn"])["GameSessions"][0]["Status"] == "ACTIVE", "status"))
    def fulfilled_event(data):
        env = json.loads(data)
        d = env["detail"]
        expect(env["detail-type"] == "GameLift Queue Placement Event" and env["source"] == "aws.gamelift" and
               env["resources"] == [q["GameSessionQueueArn"]] and d["type"] == "PlacementFulfilled" and
               d["gameSessionArn"] == p["GameSessionArn"] and d["port"] == str(p["Port"]) and
               d["ipAddress"] == p["IpAddress"] and
               [x["playerId"] for x in d["placedPlayerSessions"]] == ["e2e-player"], env)
        return True
    ev = c.run("PlacementFulfilled on GET /events", lambda: wait_for(
        stream.got, lambda e: e[1] == "PlacementFulfilled" and json.loads(e[2])["detail"]["placementId"] == "e2e-placement-1",
        "PlacementFulfilled on the stream"))
    if ev:
        c.run("... in GameLift's envelope and detail shape", lambda: fulfilled_event(ev[2]))
    stream.close()
    got = c.run("PlacementFulfilled at the webhook", lambda: wait_for(
        hook.got, lambda h: json.loads(h[1])["detail"]["placementId"] == "e2e-placement-1", "the webhook request"))
    if got:
        headers, body = got
        secret = os.environ.get("E2E_WEBHOOK_SECRET", "").encode()
        want = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        c.run("... signed: X-Anylift-Signature verifies with the webhook secret", lambda: expect(
            secret and hmac.compare_digest(headers.get("X-Anylift-Signature", ""), want), headers))
        c.run("... the same event as on the stream", lambda: expect(ev and body.decode() == ev[2], body))
    c.run("StopGameSessionPlacement after fulfilment -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.stop_game_session_placement, PlacementId="e2e-placement-1"))
    c.run("DeleteGameSessionQueue", lambda: gl.delete_game_session_queue(Name="e2e-queue"))


E2E_RULES = json.dumps({
    "name": "e2e-duel", "ruleLanguageVersion": "1.0",
    "playerAttributes": [{"name": "skill", "type": "number", "default": 10}],
    "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 1}, {"name": "blue", "minPlayers": 1, "maxPlayers": 1}],
    "rules": [{"name": "CloseSkill", "type": "distance",
               "measurements": ["max(flatten(teams[*].players.attributes[skill]))"],
               "referenceValue": "min(flatten(teams[*].players.attributes[skill]))", "maxDistance": 10}],
    "expansions": [{"target": "rules[CloseSkill].maxDistance", "steps": [{"waitTimeSeconds": 5, "value": 50}]}],
}, indent=1)


def matchmaking_rule_sets(gl, c):
    c.run("ValidateMatchmakingRuleSet", lambda: expect(
        gl.validate_matchmaking_rule_set(RuleSetBody=E2E_RULES)["Valid"] is True, "valid"))
    bad = E2E_RULES.replace('"maxDistance": 10', '"minDistance": null')
    c.run("ValidateMatchmakingRuleSet of a broken rule -> InvalidRequestException naming it", lambda: expect(
        "CloseSkill" in str(raises(gl, "InvalidRequestException", gl.validate_matchmaking_rule_set, RuleSetBody=bad)),
        "message"))
    c.run("CreateMatchmakingRuleSet", lambda: expect(gl.create_matchmaking_rule_set(
        Name="e2e-duel", RuleSetBody=E2E_RULES)["RuleSet"]["RuleSetArn"].endswith(":matchmakingruleset/e2e-duel"), "arn"))
    c.run("DescribeMatchmakingRuleSets returns the body as sent", lambda: expect(
        gl.describe_matchmaking_rule_sets(Names=["e2e-duel"])["RuleSets"][0]["RuleSetBody"] == E2E_RULES, "body"))
    c.run("DescribeMatchmakingRuleSets paginator", lambda: expect("e2e-duel" in [
        r["RuleSetName"] for page in gl.get_paginator("describe_matchmaking_rule_sets").paginate()
        for r in page["RuleSets"]], "listed"))
    c.run("DeleteMatchmakingRuleSet", lambda: gl.delete_matchmaking_rule_set(Name="e2e-duel"))
    c.run("DescribeMatchmakingRuleSets of a deleted rule set -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.describe_matchmaking_rule_sets, Names=["e2e-duel"]))


E2E_GAME_CONTAINER = {
    "ContainerName": "game", "ImageUri": "registry.example/e2e-game:1", "ServerSdkVersion": "5.2.0",
    "PortConfiguration": {"ContainerPortRanges": [{"FromPort": 7777, "ToPort": 7777, "Protocol": "UDP"}]},
}


def container_group_definitions(gl, c):
    base = dict(OperatingSystem="AMAZON_LINUX_2023", TotalMemoryLimitMebibytes=512, TotalVcpuLimit=0.5)
    c.run("CreateContainerGroupDefinition is READY at version 1", lambda: expect(
        gl.create_container_group_definition(Name="e2e-group", GameServerContainerDefinition=E2E_GAME_CONTAINER, **base)
        ["ContainerGroupDefinition"]["ContainerGroupDefinitionArn"].endswith(":containergroupdefinition/e2e-group:1"), "arn"))
    c.run("CreateContainerGroupDefinition of a taken name -> ConflictException", lambda: raises(
        gl, "ConflictException", gl.create_container_group_definition, Name="e2e-group",
        GameServerContainerDefinition=E2E_GAME_CONTAINER, **base))
    c.run("CreateContainerGroupDefinition of PER_INSTANCE with a game server -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.create_container_group_definition, Name="e2e-daemons", ContainerGroupType="PER_INSTANCE",
        GameServerContainerDefinition=E2E_GAME_CONTAINER, **base))
    c.run("UpdateContainerGroupDefinition makes version 2", lambda: expect(gl.update_container_group_definition(
        Name="e2e-group", TotalMemoryLimitMebibytes=1024)["ContainerGroupDefinition"]["VersionNumber"] == 2, "version"))
    c.run("DescribeContainerGroupDefinition of version 1", lambda: expect(gl.describe_container_group_definition(
        Name="e2e-group", VersionNumber=1)["ContainerGroupDefinition"]["TotalMemoryLimitMebibytes"] == 512, "version 1"))
    c.run("ListContainerGroupDefinitionVersions paginator, newest first", lambda: expect([
        d["VersionNumber"] for page in gl.get_paginator("list_container_group_definition_versions").paginate(Name="e2e-group")
        for d in page["ContainerGroupDefinitions"]] == [2, 1], "versions"))
    state = {}

    def create_fleet():
        f = gl.create_container_fleet(FleetRoleArn="arn:aws:iam::123456789012:role/e2e",
                                      GameServerContainerGroupDefinitionName="e2e-group")["ContainerFleet"]
        state["fleet"] = f["FleetId"]
        expect(f["Status"] == "ACTIVE" and f["GameServerContainerGroupDefinitionArn"].endswith("/e2e-group:2"), "fleet %s" % f)
    c.run("CreateContainerFleet runs the latest version", create_fleet)
    c.run("DeleteContainerGroupDefinition of a version a fleet runs -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.delete_container_group_definition, Name="e2e-group", VersionNumber=2))
    c.run("UpdateFleetCapacity of a container fleet", lambda: gl.update_fleet_capacity(
        FleetId=state["fleet"], DesiredInstances=2, MaxSize=4))
    c.run("DescribeFleetCapacity of a container fleet", lambda: expect(gl.describe_fleet_capacity(
        FleetIds=[state["fleet"]])["FleetCapacity"][0]["InstanceCounts"]["DESIRED"] == 2, "desired"))
    c.run("PutScalingPolicy, a 20% buffer", lambda: expect(gl.put_scaling_policy(
        FleetId=state["fleet"], Name="buffer", PolicyType="TargetBased", MetricName="PercentAvailableGameSessions",
        TargetConfiguration={"TargetValue": 20})["Name"] == "buffer", "name"))
    c.run("PutScalingPolicy, a second target-based policy -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.put_scaling_policy, FleetId=state["fleet"], Name="other", PolicyType="TargetBased",
        MetricName="PercentAvailableGameSessions", TargetConfiguration={"TargetValue": 10}))
    c.run("DescribeScalingPolicies paginator", lambda: expect([
        (p["Name"], p["Status"], p["TargetConfiguration"]["TargetValue"], p["Location"])
        for page in gl.get_paginator("describe_scaling_policies").paginate(FleetId=state["fleet"])
        for p in page["ScalingPolicies"]] == [("buffer", "ACTIVE", 20.0, "us-west-2")], "policies"))
    c.run("StopFleetActions shows in the fleet's attributes", lambda: (
        gl.stop_fleet_actions(FleetId=state["fleet"], Actions=["AUTO_SCALING"]),
        expect(gl.describe_fleet_attributes(FleetIds=[state["fleet"]])["FleetAttributes"][0].get("StoppedActions") == ["AUTO_SCALING"], "stopped")))
    c.run("StartFleetActions", lambda: gl.start_fleet_actions(FleetId=state["fleet"], Actions=["AUTO_SCALING"]))
    c.run("DeleteScalingPolicy", lambda: gl.delete_scaling_policy(FleetId=state["fleet"], Name="buffer"))
    c.run("DeleteScalingPolicy again -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.delete_scaling_policy, FleetId=state["fleet"], Name="buffer"))
    c.run("ListContainerFleets paginator by definition", lambda: expect([
        f["FleetId"] for page in gl.get_paginator("list_container_fleets").paginate(ContainerGroupDefinitionName="e2e-group")
        for f in page["ContainerFleets"]] == [state["fleet"]], "listed"))
    c.run("DeleteContainerFleet", lambda: gl.delete_container_fleet(FleetId=state["fleet"]))
    c.run("DeleteContainerGroupDefinition", lambda: gl.delete_container_group_definition(Name="e2e-group"))
    c.run("DescribeContainerGroupDefinition of a deleted definition -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.describe_container_group_definition, Name="e2e-group"))


def matchmaking(gl, c):
    """A STANDALONE configuration matches two players; the server's own
    matchmaker loop does the matching."""
    c.run("CreateMatchmakingRuleSet for matchmaking", lambda: gl.create_matchmaking_rule_set(
        Name="e2e-mm", RuleSetBody=E2E_RULES))
    cfg = c.run("CreateMatchmakingConfiguration STANDALONE", lambda: gl.create_matchmaking_configuration(
        Name="e2e-mm", RuleSetName="e2e-mm", RequestTimeoutSeconds=60, AcceptanceRequired=False,
        FlexMatchMode="STANDALONE", NotificationTarget="http://127.0.0.1:9/e2e-mm")["Configuration"])
    if not cfg:
        return
    c.run("... its ARN and defaults", lambda: expect(
        cfg["ConfigurationArn"].endswith(":matchmakingconfiguration/e2e-mm") and cfg["BackfillMode"] == "MANUAL", cfg))
    c.run("CreateMatchmakingConfiguration STANDALONE with a queue -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.create_matchmaking_configuration, Name="e2e-bad", RuleSetName="e2e-mm",
        RequestTimeoutSeconds=60, AcceptanceRequired=False, FlexMatchMode="STANDALONE",
        GameSessionQueueArns=["arn:aws:gamelift:us-west-2:123456789012:gamesessionqueue/x"]))
    for i, player in enumerate(["e2e-alice", "e2e-bob"]):
        c.run(f"StartMatchmaking {player}", lambda: expect(gl.start_matchmaking(
            TicketId=f"e2e-ticket-{i}", ConfigurationName="e2e-mm",
            Players=[{"PlayerId": player, "PlayerAttributes": {"skill": {"N": 20 + i}}}])["MatchmakingTicket"]["Status"] == "QUEUED", "QUEUED"))

    def completed():
        deadline = time.time() + 20
        while time.time() < deadline:
            tickets = gl.describe_matchmaking(TicketIds=["e2e-ticket-0", "e2e-ticket-1", "e2e-unknown"])["TicketList"]
            if all(t["Status"] == "COMPLETED" for t in tickets):
                return tickets
            time.sleep(0.2)
        raise AssertionError("not COMPLETED after 20 s")
    tickets = c.run("DescribeMatchmaking until COMPLETED", completed)
    if tickets:
        c.run("... both players on opposite teams, no connection info", lambda: expect(
            len(tickets) == 2 and {t["Players"][0]["Team"] for t in tickets} == {"red", "blue"} and
            all("GameSessionConnectionInfo" not in t for t in tickets), tickets))
    c.run("StopMatchmaking of a completed ticket -> InvalidRequestException", lambda: raises(
        gl, "InvalidRequestException", gl.stop_matchmaking, TicketId="e2e-ticket-0"))
    c.run("AcceptMatch of an unknown ticket -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.accept_match, TicketId="e2e-unknown", PlayerIds=["x"], AcceptanceType="ACCEPT"))
    c.run("DeleteMatchmakingConfiguration", lambda: gl.delete_matchmaking_configuration(Name="e2e-mm"))
    c.run("DeleteMatchmakingRuleSet after its configuration", lambda: gl.delete_matchmaking_rule_set(Name="e2e-mm"))


def main_phase(gl, endpoint, c, state):
    auth(endpoint, c)
    rights(endpoint, c, state)
    tls_same_port(endpoint, c)
    errors(gl, c)
    matchmaking_rule_sets(gl, c)
    container_group_definitions(gl, c)
    matchmaking(gl, c)
    if state.get("location_arn"):
        tags(gl, c, state)
    if not state.get("fleet_id"):
        c.run("a fleet exists for the remaining checks", lambda: expect(False, "CreateFleet failed in setup"))
        return
    describe_fleets(gl, c, state)
    if state.get("alias_id"):
        aliases(gl, c, state)
    if state.get("sessions"):
        search(gl, c, state)
        players(gl, c, state)


def cleanup(gl, c, state):
    """Runs last: deregistering the compute ends its game sessions."""
    if not state.get("fleet_id"):
        return
    fid = state["fleet_id"]
    c.run("DeregisterCompute", lambda: gl.deregister_compute(FleetId=fid, ComputeName="e2e-compute"))
    c.run("... ends its game sessions", lambda: expect(all(
        s["Status"] != "ACTIVE" for s in gl.describe_game_sessions(FleetId=fid)["GameSessions"]), "ACTIVE left"))
    c.run("DescribeCompute after deregistering -> NotFoundException", lambda: raises(
        gl, "NotFoundException", gl.describe_compute, FleetId=fid, ComputeName="e2e-compute"))
    for key in ("alias_id", "terminal_alias_id"):
        if state.get(key):
            c.run("DeleteAlias", lambda: gl.delete_alias(AliasId=state[key]))
    c.run("DeleteFleet", lambda: gl.delete_fleet(FleetId=fid))
    c.run("DeleteLocation", lambda: gl.delete_location(LocationName=LOCATION))


def main():
    endpoint, state_file, phase = sys.argv[1:4]
    gl = client(endpoint)
    c = Checks()
    state = {}
    if os.path.exists(state_file):
        with open(state_file) as f:
            state = json.load(f)
    seeded = state_file + ".sessions"  # written by the run script's seed step
    if os.path.exists(seeded):
        with open(seeded) as f:
            state["sessions"] = [line.strip() for line in f if line.strip()]
        state["names"] = [f"e2e-{i}" for i in range(len(state["sessions"]))]
    if phase == "setup":
        setup(gl, c, state)
        with open(state_file, "w") as f:
            json.dump(state, f)
    elif phase == "cleanup":
        cleanup(gl, c, state)
    elif phase == "placement":
        if state.get("fleet_id"):
            placement(gl, c, state, endpoint)
    else:
        main_phase(gl, endpoint, c, state)
    print(f"boto3 {phase}: {c.passed} passed, {c.failed} failed", flush=True)
    sys.exit(min(c.failed, 100))


if __name__ == "__main__":
    main()
