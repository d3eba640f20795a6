"""A game server in Python with no GameLift server SDK: it speaks to the
agent's local SDK over HTTP (standard library only). It listens on a TCP
port, says ready, waits for its game session, activates it, accepts the
one player who connects (a line: the player session id), describes the
player's seat, lets the player go, and ends (ProcessEnding, exit 0).
"""

import json
import os
import socket
import sys
import urllib.error
import urllib.request

BASE = os.environ["ANYLIFT_SDK_HTTP"]
TOKEN = os.environ["ANYLIFT_SDK_TOKEN"]


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method, headers={
        "Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=90) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        sys.exit("%s %s: %d %s" % (method, path, e.code, e.read().decode()))


def log(*args):
    print(*args, flush=True)


listener = socket.create_server(("127.0.0.1", 0))
port = listener.getsockname()[1]

call("POST", "/v1/ready", {"Port": port, "LogPaths": []})
call("POST", "/v1/health", {"Healthy": True})
state = call("GET", "/v1/process")
log("ready", state["ProcessId"], "on port", port)

after, session = 0, None
while session is None:  # a long poll: each call waits up to 30 s for events
    for ev in call("GET", "/v1/events?after=%d&wait=30" % after)["Events"]:
        after = ev["Seq"]
        if ev["Type"] == "StartGameSession":
            session = ev["GameSession"]
gsid = session["GameSessionId"]
log("starting game session", gsid, "mode", session["GameProperties"].get("mode"),
    "max players", session["MaximumPlayerSessionCount"])
call("POST", "/v1/activate")
log("activated")

conn, _ = listener.accept()
with conn, conn.makefile("rw") as f:
    psid = f.readline().strip()
    call("POST", "/v1/player-sessions/accept", {"PlayerSessionId": psid})
    seats = call("POST", "/v1/player-sessions/describe", {"PlayerSessionId": psid})["PlayerSessions"]
    log("accepted", psid, "of", seats[0]["PlayerId"], "now", seats[0]["Status"])
    f.write("welcome %s\n" % seats[0]["PlayerId"])
    f.flush()
    f.readline()  # the player leaves: the connection closes
call("POST", "/v1/player-sessions/remove", {"PlayerSessionId": psid})
call("POST", "/v1/ending")
log("ended")
