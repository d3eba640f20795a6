package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
	"github.com/anylift/anylift/internal/fleettest"
)

// Hostile strings players and game servers can choose.
const (
	hostileName  = `<script>alert("name")</script>`
	hostileValue = `"><img src=x onerror=alert(1)>`
	hostileData  = `</pre><script>alert('data')</script>`
)

// client is a cookie-keeping HTTP client that does not follow redirects.
type client struct {
	t    *testing.T
	base string
	http *http.Client
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *client) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (c *client) get(path string) (*http.Response, string) {
	req, _ := http.NewRequest("GET", c.base+path, nil)
	return c.do(req)
}

// wantEscaped GETs each path, which must answer 200, and fails the test
// where a hostile name or value shows unescaped.
func (c *client) wantEscaped(paths ...string) {
	c.t.Helper()
	for _, path := range paths {
		resp, body := c.get(path)
		if resp.StatusCode != 200 {
			c.t.Fatalf("GET %s: %s", path, resp.Status)
		}
		for _, raw := range []string{"<script>alert", "<img src=x", "</pre><script>"} {
			if strings.Contains(body, raw) {
				c.t.Errorf("GET %s shows %q unescaped", path, raw)
			}
		}
	}
}

// post submits a form from origin ("" for none).
func (c *client) post(path string, form url.Values, origin string) (*http.Response, string) {
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	return c.do(req)
}

func (c *client) signIn() {
	c.t.Helper()
	resp, _ := c.post("/console/signin", url.Values{"access_key_id": {apitest.AccessKey},
		"secret_access_key": {apitest.SecretKey}, "next": {"/console/fleets"}}, c.base)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/fleets" {
		c.t.Fatalf("sign-in: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no CSRF token on the page")
	}
	return m[1]
}

func TestSignIn(t *testing.T) {
	e := fleettest.New(t)
	c := newClient(t, e.API.URL)
	resp, _ := c.get("/console/fleets/" + e.Fleet)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/console/signin?next=") {
		t.Fatalf("signed out: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	resp, body := c.post("/console/signin", url.Values{"access_key_id": {apitest.AccessKey},
		"secret_access_key": {"wrong-secret-xyz"}}, c.base)
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "wrong-secret-xyz") {
		t.Fatalf("bad secret: %s, secret echoed: %v", resp.Status, strings.Contains(body, "wrong-secret-xyz"))
	}
	if resp, _ := c.post("/console/signin", url.Values{"access_key_id": {apitest.AccessKey},
		"secret_access_key": {apitest.SecretKey}}, "http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin sign-in: %s", resp.Status)
	}
	c.signIn()
	u, _ := url.Parse(e.API.URL + "/console/")
	var ck *http.Cookie
	for _, k := range c.http.Jar.Cookies(u) {
		ck = k
	}
	if ck == nil {
		t.Fatal("no session cookie")
	}
	resp, body = c.get("/console/fleets")
	if resp.StatusCode != 200 || !strings.Contains(body, e.Fleet) {
		t.Fatalf("fleets after sign-in: %s", resp.Status)
	}
	if strings.Contains(body, apitest.SecretKey) {
		t.Fatal("the secret key is on the page")
	}
	// A forged cookie is refused.
	forged := newClient(t, e.API.URL)
	forged.http.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: "ZGV2fDk5OTk5OTk5OTl8YWJj.forged", Path: "/console"}})
	if resp, _ := forged.get("/console/fleets"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("forged cookie: %s", resp.Status)
	}
}

func TestSetCookieAttributes(t *testing.T) {
	e := fleettest.New(t)
	c := newClient(t, e.API.URL)
	resp, _ := c.post("/console/signin", url.Values{"access_key_id": {apitest.AccessKey},
		"secret_access_key": {apitest.SecretKey}}, c.base)
	sc := resp.Header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age="} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
}

func TestNotFoundPages(t *testing.T) {
	e := fleettest.New(t)
	c := newClient(t, e.API.URL)
	c.signIn()
	for _, path := range []string{"/console/fleets/fleet-00000000-0000-0000-0000-000000000000",
		"/console/fleets/nope/computes", "/console/fleets/nope/sessions", "/console/session?id=arn%3Anope",
		"/console/session", "/console/no-such-page"} {
		resp, body := c.get(path)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "does not exist") ||
			!strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %s\n%s", path, resp.Status, body)
		}
	}
}

// TestHostileNamesAreEscaped puts markup in everything players and game
// servers can name and finds it escaped on every page that shows it.
func TestHostileNamesAreEscaped(t *testing.T) {
	e := fleettest.New(t)
	p := e.Process("host-1", "proc-1")
	id := e.SessionWith(p, &gamelift.CreateGameSessionInput{Name: aws.String(hostileName),
		GameSessionData: aws.String(hostileData),
		GameProperties:  []types.GameProperty{{Key: aws.String("mode"), Value: aws.String(hostileValue)}}})
	if _, err := e.GL.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{
		GameSessionId: aws.String(id), PlayerId: aws.String(hostileName), PlayerData: aws.String(hostileValue)}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, e.API.URL)
	c.signIn()
	c.wantEscaped("/console/fleets/"+e.Fleet+"/sessions", "/console/fleets/"+e.Fleet+"/sessions?fragment=1",
		"/console/session?id="+url.QueryEscape(id), "/console/fleets/"+e.Fleet+"/computes")
	_, body := c.get("/console/session?id=" + url.QueryEscape(id))
	if !strings.Contains(body, "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;") {
		t.Errorf("the session page does not show the escaped name")
	}
}

// TestActionsNeedTokenAndOrigin: terminating a game session needs the
// session's CSRF token and the console's own origin.
func TestActionsNeedTokenAndOrigin(t *testing.T) {
	e := fleettest.New(t)
	p := e.Process("host-1", "proc-1")
	id := e.Session(p, "target")
	c := newClient(t, e.API.URL)
	c.signIn()
	_, page := c.get("/console/session?id=" + url.QueryEscape(id))
	token := csrfOf(t, page)
	form := url.Values{"id": {id}}
	if resp, _ := c.post("/console/session/terminate", form, c.base); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no token: %s", resp.Status)
	}
	form.Set("csrf", token)
	if resp, _ := c.post("/console/session/terminate", form, "http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %s", resp.Status)
	}
	other := newClient(t, e.API.URL) // another signed-in browser: its token differs
	other.signIn()
	if resp, _ := other.post("/console/session/terminate", form, c.base); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another session's token: %s", resp.Status)
	}
	if s := status(t, e, id); s != "ACTIVE" {
		t.Fatalf("status after refused actions = %s", s)
	}
	if resp, _ := c.post("/console/session/terminate", form, c.base); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("terminate: %s", resp.Status)
	}
	if s := status(t, e, id); s != "TERMINATED" && s != "TERMINATING" {
		t.Fatalf("status after terminate = %s", s)
	}
}

func status(t *testing.T, e *fleettest.Env, id string) string {
	t.Helper()
	out, err := e.GL.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil || len(out.GameSessions) != 1 {
		t.Fatalf("DescribeGameSessions: %v", err)
	}
	return string(out.GameSessions[0].Status)
}

// TestDeregisterCompute from the computes page, with the token.
func TestDeregisterCompute(t *testing.T) {
	e := fleettest.New(t)
	e.Process("host-1", "proc-1")
	c := newClient(t, e.API.URL)
	c.signIn()
	_, page := c.get("/console/fleets/" + e.Fleet + "/computes")
	if !strings.Contains(page, "proc-1") || !strings.Contains(page, "healthy") {
		t.Fatalf("computes page lacks the process:\n%s", page)
	}
	resp, _ := c.post("/console/fleets/"+e.Fleet+"/computes/deregister",
		url.Values{"compute": {"host-1"}, "csrf": {csrfOf(t, page)}}, c.base)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("deregister: %s", resp.Status)
	}
	if _, err := e.GL.DescribeCompute(context.Background(), &gamelift.DescribeComputeInput{FleetId: aws.String(e.Fleet),
		ComputeName: aws.String("host-1")}); err == nil {
		t.Fatal("the compute is still registered")
	}
}
