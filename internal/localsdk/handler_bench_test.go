package localsdk

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anylift/anylift/sdk/server"
)

// BenchmarkHandler is the local SDK's own cost per call, without the
// network: the handler of a health report and of a state read, called
// directly, beside a handler answering {} the same way (the ceiling).
// The network benchmarks are in internal/bench (BenchmarkLocalSDK).
//
//	go test ./internal/localsdk -run '^$' -bench Handler -benchmem
func BenchmarkHandler(b *testing.B) {
	s := &Server{conns: map[[32]byte]*Conn{}}
	token := s.Add(NewConn("proc-1", func() server.ServerParameters { return server.ServerParameters{} }, server.Options{}))
	h := s.handler()
	trivial := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}\n"))
	})
	for _, tc := range []struct {
		name, method, path, body string
		h                        http.Handler
	}{
		{"ceiling", "POST", "/v1/health", `{"Healthy":true}`, trivial},
		{"health", "POST", "/v1/health", `{"Healthy":true}`, h},
		{"process", "GET", "/v1/process", "", h},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				r := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
				r.RemoteAddr = "127.0.0.1:40000"
				r.Header.Set("Authorization", "Bearer "+token)
				w := httptest.NewRecorder()
				tc.h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
