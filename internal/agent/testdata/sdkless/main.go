// Command sdkless is a game server without a server SDK, for the tests of
// the agent's wrapper. It prints its arguments and the ANYLIFT_* and
// GAME_* variables it was given, listens on -port (TCP, or UDP with
// -udp) after -start-delay, takes one player (a line or datagram: the
// player session id, answered "bye") and exits with -exit. SIGTERM makes
// it exit 0 at once, unless -ignore-term.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	port := flag.Int("port", 0, "the port to listen on")
	udp := flag.Bool("udp", false, "listen on UDP instead of TCP")
	delay := flag.Duration("start-delay", 0, "how long to load before listening")
	code := flag.Int("exit", 0, "exit code after the player left")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	flag.String("session", "", "the game session id (printed)")
	flag.String("mode", "", "the game mode (printed)")
	flag.Parse()

	fmt.Printf("args: %q\n", os.Args[1:])
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ANYLIFT_") || strings.HasPrefix(kv, "GAME_") || strings.HasPrefix(kv, "GAMELIFT_") {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	for _, kv := range env {
		fmt.Printf("env: %s\n", kv)
	}

	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		for range term {
			if *ignoreTerm {
				fmt.Println("ignoring SIGTERM")
				continue
			}
			fmt.Println("terminated")
			os.Exit(0)
		}
	}()

	time.Sleep(*delay)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	var player string
	if *udp {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			fail(err)
		}
		fmt.Println("listening on udp", addr)
		buf := make([]byte, 512)
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			fail(err)
		}
		player = strings.TrimSpace(string(buf[:n]))
		pc.WriteTo([]byte("bye\n"), from)
	} else {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fail(err)
		}
		fmt.Println("listening on tcp", addr)
		c, err := ln.Accept()
		if err != nil {
			fail(err)
		}
		line, _ := bufio.NewReader(c).ReadString('\n')
		player = strings.TrimSpace(line)
		fmt.Fprintln(c, "bye")
		c.Close()
	}
	fmt.Println("player left:", player)
	os.Exit(*code)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sdkless:", err)
	os.Exit(2)
}
