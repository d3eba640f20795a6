// Command chat is a tiny multiplayer chat room run as a game server with
// Anylift's Go server SDK (github.com/anylift/anylift/sdk/server). It works
// unchanged on Anylift and on an Amazon GameLift Anywhere fleet.
//
// It is started with the four values GameLift's SDK takes (-websocketurl
// -authtoken -hostid -fleetid, or the GAMELIFT_SDK_* variables) and -port,
// the TCP port players connect to (0: any free port). The game protocol is
// lines of text over TCP: a joining player sends its player session id
// first; the server checks it with AcceptPlayerSession and answers "OK" or
// "ERR <reason>" (and hangs up). Every later line is relayed to the other
// players as "<player session id>: <line>". When a player hangs up its
// player session is removed; when the last one has left the game session
// ends (the SDK's passive destroy) and the program exits with status 0.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	sdk "github.com/anylift/anylift/sdk/server"
)

func main() {
	var params sdk.ServerParameters
	flag.StringVar(&params.WebSocketURL, "websocketurl", "", "the service's WebSocket URL (GAMELIFT_SDK_WEBSOCKET_URL)")
	flag.StringVar(&params.AuthToken, "authtoken", "", "the compute auth token (GAMELIFT_SDK_AUTH_TOKEN)")
	flag.StringVar(&params.HostID, "hostid", "", "the compute name (GAMELIFT_SDK_HOST_ID)")
	flag.StringVar(&params.FleetID, "fleetid", "", "the fleet id (GAMELIFT_SDK_FLEET_ID)")
	flag.StringVar(&params.ProcessID, "processid", sdk.ManagedResource, "this process's id, unique on the compute (GAMELIFT_SDK_PROCESS_ID); random by default")
	host := flag.String("host", "", "the address players connect to is bound on this host (all interfaces by default)")
	port := flag.Int("port", 0, "the TCP port players connect to (0: any free port)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(params, *host, *port, log); err != nil {
		log.Error("chat server failed", "err", err)
		os.Exit(1)
	}
}

// run serves one game session and returns when it has ended.
func run(params sdk.ServerParameters, host string, port int, log *slog.Logger) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer ln.Close()
	port = ln.Addr().(*net.TCPAddr).Port
	proc, err := sdk.Init(params, sdk.Options{Logger: log})
	if err != nil {
		return err
	}
	room := &room{proc: proc, log: log, players: map[string]net.Conn{}}
	// Signals are caught before the process says it is ready: a stop
	// asked for any time after that ends it cleanly (ProcessEnding).
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	done := make(chan struct{})
	err = proc.NotifyProcessReady(port, nil, sdk.Notifications{
		OnCreateSessionBegin: func(gs sdk.GameSession) bool {
			log.Info("game session starting", "id", gs.GameSessionID, "max_players", gs.MaximumPlayerSessionCount)
			return true
		},
		OnCreateSessionEnd: func() { log.Info("game session active") },
		OnDestroySessionBegin: func() bool {
			// The service asked the process to end (onProcessTerminate,
			// a scale-down say): it says by when.
			if at, err := proc.GetTerminationTime(); err == nil {
				log.Info("the service ends this process", "termination_time", at)
			}
			return true
		},
		OnDestroySessionEnd: func() { close(done) },
	})
	if err != nil {
		proc.Destroy()
		return err
	}
	log.Info("chat server ready", "port", port)
	go room.accept(ln)
	select {
	case <-done:
		log.Info("game session ended")
	case s := <-stop:
		log.Info("stopping", "signal", s.String())
		if err := proc.ProcessEnding(); err != nil {
			log.Warn("ProcessEnding failed", "err", err)
		}
		proc.Destroy()
	}
	return nil
}

// joinTimeout is how long a new connection has to name its player session.
const joinTimeout = 10 * time.Second

// room is the chat room: the players present, by player session id.
type room struct {
	proc *sdk.Process
	log  *slog.Logger

	mu      sync.Mutex
	players map[string]net.Conn
}

func (r *room) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // the listener closed: the game is over
		}
		go r.serve(c)
	}
}

// serve runs one player's connection: admission by player session id,
// then relaying lines until it hangs up.
func (r *room) serve(c net.Conn) {
	defer c.Close()
	in := bufio.NewScanner(c)
	c.SetReadDeadline(time.Now().Add(joinTimeout))
	if !in.Scan() {
		return
	}
	c.SetReadDeadline(time.Time{})
	id := in.Text()
	if err := r.proc.AcceptPlayerSession(id); err != nil {
		r.log.Info("player refused", "player_session", id, "err", err)
		fmt.Fprintf(c, "ERR %v\n", err)
		return
	}
	r.mu.Lock()
	r.players[id] = c
	r.mu.Unlock()
	fmt.Fprintf(c, "OK\n")
	r.log.Info("player joined", "player_session", id)
	for in.Scan() {
		r.broadcast(id, in.Text())
	}
	r.mu.Lock()
	delete(r.players, id)
	r.mu.Unlock()
	r.log.Info("player left", "player_session", id)
	// With passive destroy (on by default), removing the last player ends
	// the game session: ProcessEnding, Destroy, then OnDestroySessionEnd.
	if err := r.proc.RemovePlayerSession(id); err != nil {
		r.log.Warn("RemovePlayerSession failed", "player_session", id, "err", err)
	}
}

// broadcast sends a line from one player to all the others.
func (r *room) broadcast(from, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, c := range r.players {
		if id != from {
			fmt.Fprintf(c, "%s: %s\n", from, line)
		}
	}
}
