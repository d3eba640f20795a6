package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Exit statuses, as the aws CLI (version 2) uses them.
const (
	ExitUsage      = 252 // the command line cannot be read or fails validation
	ExitConfig     = 253 // no credentials
	ExitService    = 254 // the service answered with an error
	ExitConnection = 255 // no answer
	ExitQuery      = 255 // --query failed on the answer (the aws CLI's catch-all status)
)

// ExitError ends the program with Code; its message has already been
// printed to stderr.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the process exit status.
func (e *ExitError) ExitCode() int { return e.Code }

// IsOperation reports whether name is an operation the CLI offers.
func IsOperation(name string) bool {
	_, ok := served()[name]
	return ok
}

// Run runs "anylift <operation> [flags]": args starts with the operation's
// aws CLI name (global flags may come before it). Output goes to stdout;
// errors go to stderr worded as the aws CLI words them, and come back as an
// *ExitError carrying the aws CLI's exit status.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	g := &globals{}
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "--") {
		n, err := g.parseGlobal(args, i)
		if err != nil {
			return fail(stderr, ExitUsage, err)
		}
		if n == 0 {
			return fail(stderr, ExitUsage, usagef("Unknown options: %s", args[i]))
		}
		i += n
	}
	if i >= len(args) {
		if g.help {
			return writeUsage(stdout)
		}
		writeUsage(stderr)
		return fail(stderr, ExitUsage, usagef("no operation given"))
	}
	c, ok := served()[args[i]]
	if !ok {
		return fail(stderr, ExitUsage, unknownOperation(args[i]))
	}
	rest := args[i+1:]
	if len(rest) > 0 && rest[len(rest)-1] == "help" {
		g.help, rest = true, rest[:len(rest)-1]
	}
	in, err := parseCommand(c, rest, g)
	if err != nil {
		return fail(stderr, ExitUsage, err)
	}
	if g.help {
		return writeCommandHelp(stdout, c)
	}
	var q *query
	if g.querySet {
		if q, err = compileQuery(g.query); err != nil {
			return fail(stderr, ExitUsage, err)
		}
	}
	return invoke(ctx, c, in, g, q, getenv, stdout, stderr)
}

// fail prints err to stderr the aws CLI's way and wraps it with code.
func fail(stderr io.Writer, code int, err error) error {
	var ue *usageError
	if errors.As(err, &ue) && !ue.plain {
		fmt.Fprintf(stderr, "anylift: error: %s\n", err)
	} else {
		fmt.Fprintf(stderr, "\n%s\n", err)
	}
	return &ExitError{Code: code, Err: err}
}

func invoke(ctx context.Context, c *command, in any, g *globals, q *query, getenv func(string) string, stdout, stderr io.Writer) error {
	t, output, err := resolve(g, getenv)
	var ue *usageError
	if errors.As(err, &ue) {
		return fail(stderr, ExitUsage, err)
	}
	if err != nil {
		return fail(stderr, ExitConfig, err)
	}
	var tree any
	var paged *pages
	paginate, err := g.paginates(c, in)
	if err != nil {
		return fail(stderr, ExitUsage, err)
	}
	if paginate {
		if paged, err = t.callPages(ctx, c, in, g.paging); err == nil {
			tree = paged.merged()
		}
	} else {
		tree, err = t.callOnce(ctx, c.Op, in, reflect.TypeOf(c.Output()))
	}
	var se *serviceError
	var ce *connectError
	switch {
	case errors.As(err, &se):
		return fail(stderr, ExitService, err)
	case errors.As(err, &ce):
		return fail(stderr, ExitConnection, err)
	case err != nil:
		return fail(stderr, ExitUsage, err)
	}
	if output == "text" && paged != nil {
		// Text prints page by page, the query applied to each.
		return paged.writeText(stdout, q.applier(stderr))
	}
	if q != nil {
		if tree, err = q.apply(tree); err != nil {
			return fail(stderr, ExitQuery, err)
		}
	}
	switch output {
	case "table":
		return writeTable(stdout, c.Op, tree)
	case "text":
		return writeText(stdout, tree)
	}
	return writeJSON(stdout, tree)
}

// resolve settles endpoint, region, credentials and output format: flags
// first, then ANYLIFT_* variables, then the usual AWS variables, then the
// defaults of "anylift serve".
func resolve(g *globals, getenv func(string) string) (*target, string, error) {
	pick := func(flag string, envs ...string) string {
		if flag != "" {
			return flag
		}
		for _, e := range envs {
			if v := getenv(e); v != "" {
				return v
			}
		}
		return ""
	}
	t := &target{
		endpoint: pick(g.endpoint, "ANYLIFT_ENDPOINT", "AWS_ENDPOINT_URL_GAMELIFT", "AWS_ENDPOINT_URL"),
		region:   pick(g.region, "ANYLIFT_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"),
		client:   &http.Client{Timeout: 60 * time.Second},
		now:      time.Now,
	}
	if t.endpoint == "" {
		t.endpoint = DefaultEndpoint
	}
	if t.region == "" {
		t.region = DefaultRegion
	}
	output := pick(g.output, "ANYLIFT_OUTPUT", "AWS_DEFAULT_OUTPUT")
	if output == "" {
		output = "json"
	}
	if !slices.Contains([]string{"json", "table", "text"}, output) {
		return nil, "", usagef("argument --output: invalid choice: %q (choose from 'json', 'text', 'table')", output)
	}
	key, secret, token := g.accessKey, g.secretKey, g.sessionToken
	if key == "" && secret == "" {
		key, secret, token = getenv("ANYLIFT_ACCESS_KEY"), getenv("ANYLIFT_SECRET_KEY"), getenv("ANYLIFT_SESSION_TOKEN")
	}
	if key == "" && secret == "" {
		key, secret, token = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")
	}
	if key == "" && secret == "" && isLoopback(t.endpoint) {
		key, secret, t.devPair = DevAccessKey, DevSecretKey, true
	}
	if key == "" || secret == "" {
		return nil, "", errors.New("Unable to locate credentials. Give --access-key and --secret-key, " +
			"or set ANYLIFT_ACCESS_KEY and ANYLIFT_SECRET_KEY, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.")
	}
	t.creds = aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, SessionToken: token}
	return t, output, nil
}
