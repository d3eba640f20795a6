package sdkserver

import (
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/sdkwire"
)

// proc is what the Server keeps for a process across its connections.
// All fields are guarded by Server.mu.
type proc struct {
	conns   []*session         // oldest first; pushes go to the last
	opening int                // handshakes being authenticated (open)
	excused bool               // Connected answered true for an opening alone
	ended   bool               // TerminateServerProcess succeeded
	answers map[string]*answer // by RequestId
	order   []string           // RequestIds of answers, oldest first
}

// answer is the response frame to one RequestId; done closes when frame is set.
type answer struct {
	done  chan struct{}
	frame []byte
}

// open counts a handshake of process p from before it is authenticated
// (Authenticator records the connection) until it is attached or given
// up (abandon): meanwhile p counts as Connected here. Without it, the
// close of p's previous connection, recorded after the new one's
// record was written but before the new one was attached, would mark p
// disconnected while it is connected.
func (s *Server) open(p Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procLocked(p).opening++
}

// abandon ends an opening of p that attached no connection; recorded
// says whether Authenticator had recorded it. It reports whether p must
// now be recorded disconnected: it has no connection or opening left
// here, and either this one was recorded or a closing connection was
// not recorded disconnected because of an opening (excused).
func (s *Server) abandon(p Process, recorded bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.procs[p]
	if pr == nil {
		return false // an ended process's entry went with its last connection
	}
	pr.opening--
	if len(pr.conns) > 0 || pr.opening > 0 {
		return false
	}
	disconnect := (recorded || pr.excused) && !pr.ended
	pr.excused = false
	if pr.ended || len(pr.answers) == 0 {
		// An ended process without connections goes, as in detach; one
		// with nothing kept too: a refused stranger leaves no trace.
		delete(s.procs, p)
	}
	return disconnect
}

func (s *Server) procLocked(p Process) *proc {
	pr := s.procs[p]
	if pr == nil {
		pr = &proc{answers: map[string]*answer{}}
		s.procs[p] = pr
	}
	return pr
}

// attach registers a new connection of h's process, ending an opening
// of it when opened. Older connections of
// the process are closed (1000) after Config.ReplacedGrace: the SDKs open
// the new one before letting go of the old on RefreshConnection. It
// reports false once the Server is closed.
func (s *Server) attach(h *Handshake, c Conn, opened bool) (*session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procLocked(h.Process)
	if opened {
		p.opening--
	}
	if s.closed {
		return nil, false
	}
	s.wg.Add(1)
	p.excused = false
	sess := newSession(s, h, c)
	if older := append([]*session(nil), p.conns...); len(older) > 0 {
		time.AfterFunc(s.cfg.ReplacedGrace, func() {
			for _, o := range older {
				o.kill(CloseNormal, "replaced by a newer connection")
			}
		})
	}
	p.conns = append(p.conns, sess)
	s.conns.Add(1)
	return sess, true
}

// detach unregisters a closed connection. It reports whether that was the
// last connection of a process that has not ended. An ended process with
// no connection left is forgotten.
func (s *Server) detach(sess *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[sess.h.Process]
	if p == nil {
		return false
	}
	for i, c := range p.conns {
		if c == sess {
			p.conns = append(p.conns[:i:i], p.conns[i+1:]...)
			s.conns.Add(-1)
			break
		}
	}
	if len(p.conns) > 0 {
		return false
	}
	if p.ended {
		if p.opening == 0 {
			delete(s.procs, sess.h.Process)
		}
		return false
	}
	return true
}

// Push sends msg to the newest connection of process p. It reports false
// when p has no connection on this Server, or its send queue is full (the
// connection is then dropped; the SDK reconnects). A true result means the
// frame was queued, not that the process read it.
func (s *Server) Push(p Process, msg sdkwire.Push) bool {
	frame, err := sdkwire.EncodePush(msg)
	if err != nil {
		s.cfg.Logger.Error("encoding a push", "action", msg.Action(), "err", err)
		return false
	}
	s.mu.Lock()
	pr := s.procs[p]
	var newest *session
	if pr != nil && len(pr.conns) > 0 {
		newest = pr.conns[len(pr.conns)-1]
	}
	s.mu.Unlock()
	return newest != nil && newest.send(frame)
}

// Connected reports whether process p has a connection on this Server,
// or a handshake being authenticated (open).
func (s *Server) Connected(p Process) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.procs[p]
	if pr == nil {
		return false
	}
	if len(pr.conns) == 0 && pr.opening > 0 {
		pr.excused = true
	}
	return len(pr.conns) > 0 || pr.opening > 0
}

// Disconnect closes every connection of p with close code 1000, which
// tells the C++ and C# SDKs not to reconnect (the Go SDK still tries, and
// should then be refused by the Authenticator). For a deregistered compute
// or a terminated process. It reports whether p had a connection.
func (s *Server) Disconnect(p Process, reason string) bool {
	s.mu.Lock()
	var conns []*session
	if pr := s.procs[p]; pr != nil {
		conns = append(conns, pr.conns...)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill(CloseNormal, reason)
	}
	return len(conns) > 0
}

// CloseFleet closes every connection on this Server of the processes of
// fleet fleetID (an id; processes that named their fleet by ARN count as
// well), those relayed from other nodes included, with close code 1012:
// the SDKs reconnect, through the load balancer, to wherever the fleet is
// served now. For a node that no longer owns the fleet. It returns the
// number of connections closed.
func (s *Server) CloseFleet(fleetID, reason string) int {
	s.mu.Lock()
	var conns []*session
	for p, pr := range s.procs {
		if game.ResourceID(p.FleetID, "fleet") == fleetID {
			conns = append(conns, pr.conns...)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill(CloseServiceRestart, reason)
	}
	return len(conns)
}

// Drop ends every connection of p without a close frame, as a failed
// network would (an injected fault): the SDKs reconnect, and the process
// is treated as any process whose connection dropped. It reports whether
// p had a connection.
func (s *Server) Drop(p Process) bool {
	s.mu.Lock()
	var conns []*session
	if pr := s.procs[p]; pr != nil {
		conns = append(conns, pr.conns...)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.kill(CloseAbrupt, "")
	}
	return len(conns) > 0
}

// Forget drops what the Server keeps for a process without connections
// (its cached answers). The Backend calls it once it treats a process
// that disconnected as lost. It does nothing while p is connected, or a
// handshake of it is being authenticated (open).
func (s *Server) Forget(p Process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr := s.procs[p]; pr != nil && len(pr.conns) == 0 && pr.opening == 0 {
		delete(s.procs, p)
	}
}

// begin returns the answer for RequestId id of process p, and whether the
// caller is the first to ask and so must compute it and call finish.
func (s *Server) begin(p Process, id string) (*answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.procs[p]
	if a, ok := pr.answers[id]; ok {
		return a, false
	}
	a := &answer{done: make(chan struct{})}
	pr.answers[id] = a
	pr.order = append(pr.order, id)
	if len(pr.order) > s.cfg.AnswerCache {
		delete(pr.answers, pr.order[0])
		pr.order = pr.order[1:]
	}
	return a, true
}

// finish publishes the answer to id. Answers with a 5xx status are not
// kept: a retry with the same RequestId runs the request again. ended
// records a successful TerminateServerProcess.
func (s *Server) finish(p Process, id string, a *answer, frame []byte, status int, ended bool) {
	s.mu.Lock()
	pr := s.procs[p]
	if status >= 500 && pr.answers[id] == a {
		delete(pr.answers, id)
		for i, o := range pr.order {
			if o == id {
				pr.order = append(pr.order[:i:i], pr.order[i+1:]...)
				break
			}
		}
	}
	if ended {
		pr.ended = true
	}
	s.mu.Unlock()
	a.frame = frame
	close(a.done)
}

// Processes lists the processes with a connection on this Server.
func (s *Server) Processes() []Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Process, 0, len(s.procs))
	for p, pr := range s.procs {
		if len(pr.conns) > 0 {
			out = append(out, p)
		}
	}
	return out
}
