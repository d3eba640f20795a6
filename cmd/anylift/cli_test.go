package main

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryOperationExitStatuses: "anylift <operation>" run as a process
// against "anylift serve" prints the aws CLI's messages and exits with the
// aws CLI's statuses.
func TestBinaryOperationExitStatuses(t *testing.T) {
	bin := buildBinary(t)
	srv := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--tls-listen", "", "--data-dir", t.TempDir(),
		"--access-key", "AKIDCLI", "--secret-key", "cli-secret")
	srv.Env = []string{}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	r := bufio.NewReader(stdout)
	line, _ := r.ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "anylift listening on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	go io.Copy(io.Discard, r)

	creds := []string{"AWS_ACCESS_KEY_ID=AKIDCLI", "AWS_SECRET_ACCESS_KEY=cli-secret"}
	tests := []struct {
		name   string
		env    []string
		args   []string
		status int
		out    string // in stdout, or stderr when the status is not 0
	}{
		{"success", append([]string{"ANYLIFT_ENDPOINT=" + url}, creds...),
			[]string{"create-location", "--location-name", "custom-bin"}, 0, `"LocationName": "custom-bin"`},
		{"service error", append([]string{"AWS_ENDPOINT_URL=" + url}, creds...),
			[]string{"delete-location", "--location-name", "custom-missing"}, 254,
			"\nAn error occurred (NotFoundException) when calling the DeleteLocation operation: "},
		{"wrong secret", []string{"ANYLIFT_ENDPOINT=" + url, "ANYLIFT_ACCESS_KEY=AKIDCLI", "ANYLIFT_SECRET_KEY=wrong"},
			[]string{"list-locations"}, 254, "An error occurred (InvalidSignatureException) when calling the ListLocations operation"},
		{"query", append([]string{"ANYLIFT_ENDPOINT=" + url}, creds...),
			[]string{"list-locations", "--query", "Locations[?LocationName=='custom-bin'].LocationName | [0]", "--output", "text"}, 0, "custom-bin\n"},
		{"bad query", creds, []string{"list-locations", "--query", "Locations[?"}, 252, "\nBad value for --query Locations[?: Invalid jmespath expression: "},
		{"usage", creds, []string{"create-gme-session"}, 252, "anylift: error: unknown operation \"create-gme-session\"; did you mean create-game-session?\n"},
		{"api name", creds, []string{"CreateGameSession"}, 252, `is "create-game-session" here`},
		{"missing flag", creds, []string{"create-location"}, 252, "the following arguments are required: --location-name"},
		// With no credentials, a local endpoint gets anylift dev's pair,
		// which a server not in dev mode refuses.
		{"no credentials, local server not in dev mode", []string{"ANYLIFT_ENDPOINT=" + url}, []string{"list-locations"}, 254,
			`the key pair of "anylift dev" was tried; give --access-key and --secret-key)`},
		{"no credentials, remote endpoint", []string{"ANYLIFT_ENDPOINT=http://192.0.2.1:9870"}, []string{"list-locations"}, 253, "Unable to locate credentials"},
		{"unreachable", creds, []string{"--endpoint-url", "http://127.0.0.1:1", "list-locations"}, 255,
			`Could not connect to the endpoint URL: "http://127.0.0.1:1/"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = tt.env
			var out, errOut strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err := cmd.Run()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if status != 0 {
				got = errOut.String()
			}
			if status != tt.status || !strings.Contains(got, tt.out) {
				t.Errorf("exit %d, want %d; output %q, want it to contain %q", status, tt.status, got, tt.out)
			}
		})
	}
}
