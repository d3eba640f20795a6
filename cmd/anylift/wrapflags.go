package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/anylift/anylift/internal/agent"
)

// processFlags defines the flags of "anylift agent" and "anylift dev"
// about how the agent serves its processes: the local SDK over HTTP and
// the wrapper of game binaries without an SDK. build returns the local
// SDK's address ("" for none) and the wrapper (nil without --wrap).
func processFlags(fs *flag.FlagSet) (build func() (localSDK string, wrap *agent.Wrap, err error)) {
	local := fs.String("local-sdk-listen", "127.0.0.1:0", "loopback `address` of the server SDK over HTTP that the agent "+
		"serves to each process it launches, named in its ANYLIFT_SDK_HTTP and ANYLIFT_SDK_TOKEN (empty: none)")
	on := fs.Bool("wrap", false, "run the launch path as a game binary without a server SDK: the agent holds each process's "+
		"SDK connection, starts the binary when a game session is placed and expands {{.GamePort}}, {{.GameSessionId}}... "+
		"in its parameters (docs/wrapper.md)")
	ports := fs.String("wrap-ports", "", "`FROM-TO` game ports handed to wrapped processes, one each (default: a free port the system picks)")
	activate := fs.String("wrap-activate", "listen", "when a wrapped game's session is activated: listen (once the binary listens "+
		"on its port, TCP or UDP) or start (as soon as the binary has started)")
	timeout := fs.Duration("wrap-listen-timeout", time.Minute, "how long a wrapped binary has to listen on its port before it is stopped")
	return func() (string, *agent.Wrap, error) {
		if !*on {
			return *local, nil, nil
		}
		w := &agent.Wrap{ListenTimeout: *timeout}
		switch *activate {
		case "listen":
		case "start":
			w.ActivateAtOnce = true
		default:
			return "", nil, fmt.Errorf("--wrap-activate must be listen or start, not %q", *activate)
		}
		if *ports != "" {
			from, to, ok := strings.Cut(*ports, "-")
			var err1, err2 error
			w.PortMin, err1 = strconv.Atoi(from)
			w.PortMax, err2 = strconv.Atoi(to)
			if !ok || err1 != nil || err2 != nil || w.PortMin < 1 || w.PortMax < w.PortMin || w.PortMax > 60000 {
				return "", nil, fmt.Errorf("--wrap-ports %q: want FROM-TO within 1-60000", *ports)
			}
		}
		return *local, w, nil
	}
}
