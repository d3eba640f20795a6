package agent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
)

// Session is what a wrapped binary's templates are expanded with. The
// names are those of GameLift's game server wrapper.
type Session struct {
	GameSessionId             string
	GameSessionName           string
	FleetId                   string
	IpAddress                 string
	DNSName                   string
	GamePort                  int
	MaximumPlayerSessionCount int
	GameProperties            string            // the properties as one JSON object
	Property                  map[string]string // each property: {{.Property.mode}}
	GameSessionData           string
	MatchmakerData            string
	LogDirectory              string // <log dir>/<process id>, made before the start
	ProcessId                 string
}

// SessionEnv is the environment a wrapped binary always gets, from s.
func SessionEnv(s Session) []string {
	return []string{
		"ANYLIFT_GAME_SESSION_ID=" + s.GameSessionId,
		"ANYLIFT_GAME_SESSION_NAME=" + s.GameSessionName,
		"ANYLIFT_FLEET_ID=" + s.FleetId,
		"ANYLIFT_IP_ADDRESS=" + s.IpAddress,
		"ANYLIFT_DNS_NAME=" + s.DNSName,
		"ANYLIFT_GAME_PORT=" + strconv.Itoa(s.GamePort),
		"ANYLIFT_MAX_PLAYERS=" + strconv.Itoa(s.MaximumPlayerSessionCount),
		"ANYLIFT_GAME_PROPERTIES=" + s.GameProperties,
		"ANYLIFT_GAME_SESSION_DATA=" + s.GameSessionData,
		"ANYLIFT_MATCHMAKER_DATA=" + s.MatchmakerData,
		"ANYLIFT_LOG_DIR=" + s.LogDirectory,
		"ANYLIFT_PROCESS_ID=" + s.ProcessId,
	}
}

// templates are a wrapped launch's argument and environment templates.
type templates struct {
	args []*template.Template
	env  []*template.Template // "NAME=value" templates
}

// CheckWrap reports whether a runtime configuration's parameters parse
// as the wrapper's templates.
func CheckWrap(parameters string) error {
	args, err := SplitParameters(parameters)
	if err == nil {
		_, err = parseTemplates(args)
	}
	return err
}

// envWord is a leading NAME=VALUE word of a wrapped launch's parameters:
// a variable of the binary's environment, not an argument.
var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// parseTemplates parses a wrapped launch's parameters: leading NAME=VALUE
// words are the environment's templates, the rest the arguments'.
func parseTemplates(words []string) (*templates, error) {
	var env, args []string
	for i, w := range words {
		if !envWord.MatchString(w) {
			args = words[i:]
			break
		}
		env = append(env, w)
	}
	t := &templates{}
	for i, a := range args {
		tt, err := template.New(fmt.Sprintf("argument %d", i+1)).Option("missingkey=zero").Parse(a)
		if err != nil {
			return nil, err
		}
		t.args = append(t.args, tt)
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		tt, err := template.New("variable " + name).Option("missingkey=zero").Parse(kv)
		if err != nil {
			return nil, err
		}
		t.env = append(t.env, tt)
	}
	return t, nil
}

func (t *templates) expand(s Session) (args, env []string, err error) {
	run := func(tt *template.Template) string {
		var b strings.Builder
		if e := tt.Execute(&b, s); e != nil && err == nil {
			err = e
		}
		return b.String()
	}
	for _, tt := range t.args {
		args = append(args, run(tt))
	}
	for _, tt := range t.env {
		env = append(env, run(tt))
	}
	return args, env, err
}
