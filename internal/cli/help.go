package cli

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

const globalHelp = `Global options (before or after the operation):
  --endpoint-url URL   the service (ANYLIFT_ENDPOINT, AWS_ENDPOINT_URL_GAMELIFT,
                       AWS_ENDPOINT_URL; default ` + DefaultEndpoint + `)
  --region REGION      signing region (ANYLIFT_REGION, AWS_REGION,
                       AWS_DEFAULT_REGION; default ` + DefaultRegion + `)
  --access-key KEY     access key id (ANYLIFT_ACCESS_KEY, AWS_ACCESS_KEY_ID)
  --secret-key SECRET  its secret (ANYLIFT_SECRET_KEY, AWS_SECRET_ACCESS_KEY);
                       with none, an endpoint on this machine gets the pair
                       ` + DevAccessKey + `/` + DevSecretKey + ` (what "anylift dev" accepts)
  --session-token TOK  session token (ANYLIFT_SESSION_TOKEN, AWS_SESSION_TOKEN)
  --output FORMAT      json (default), table or text (ANYLIFT_OUTPUT,
                       AWS_DEFAULT_OUTPUT)
  --query JMESPATH     what of the answer to print, as the aws CLI's --query
                       ('GameSessions[].GameSessionId'), applied before --output
  --cli-input-json J   the whole input as JSON (or file://path); flags override
  --no-paginate        one call only, for an operation that pages
  --help               this help, or an operation's flags
`

// writeUsage is the usage of "anylift <operation>".
func writeUsage(w io.Writer) error {
	if _, err := io.WriteString(w, "usage: anylift <operation> [flags]\n\n"); err != nil {
		return err
	}
	return WriteOperations(w)
}

// WriteOperations lists the served operations and the global options.
func WriteOperations(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Operations, named and flagged as in \"aws gamelift\":\n")
	for _, n := range servedNames() {
		b.WriteString("  " + n + "\n")
	}
	b.WriteString("\n" + globalHelp)
	b.WriteString("\nOther operations of \"aws gamelift\" (builds, scripts, EC2 fleets, game\n" +
		"server groups, and more) are not served.\n")
	b.WriteString("\nRun \"anylift <operation> --help\" for an operation's flags.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCommandHelp describes c: its documentation, then each flag with its
// type, whether it is required, its allowed values, its shorthand form and
// its documentation.
func writeCommandHelp(w io.Writer, c *command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "NAME\n    %s (GameLift's %s)\n\nDESCRIPTION\n", c.Name, c.Op)
	wrap(&b, summaries[c.Op], "    ")
	b.WriteString("\n")
	wrap(&b, "The flags are those of \"aws gamelift "+c.Name+"\", documented as the API model "+
		"documents them, less what speaks of GameLift's own hosting (EC2, containers, builds and scripts).", "    ")
	unused := withoutEffect[c.Op]
	b.WriteString("\nSYNOPSIS\n    anylift " + c.Name + "\n")
	for _, p := range c.Params {
		if slices.Contains(unused, p.Flag) {
			continue
		}
		if p.Required {
			fmt.Fprintf(&b, "        --%s <value>\n", p.Flag)
		} else if p.Type == "boolean" {
			fmt.Fprintf(&b, "        [--%s | --no-%s]\n", p.Flag, p.Flag)
		} else {
			fmt.Fprintf(&b, "        [--%s <value>]\n", p.Flag)
		}
	}
	if c.Pages != "" {
		b.WriteString("        [--starting-token <value>]\n        [--page-size <value>]\n        [--max-items <value>]\n")
	}
	b.WriteString("\nOPTIONS\n")
	in := reflect.TypeOf(c.Input()).Elem()
	for _, p := range c.Params {
		if slices.Contains(unused, p.Flag) {
			continue
		}
		f, _ := in.FieldByName(p.Member)
		req := ""
		if p.Required {
			req = ", required"
		}
		fmt.Fprintf(&b, "    --%s (%s%s)\n", p.Flag, p.Type, req)
		if p.Doc != "" {
			wrap(&b, p.Doc, "        ")
		}
		if len(p.Enum) > 0 {
			b.WriteString("\n        Possible values:\n")
			for _, v := range p.Enum {
				b.WriteString("        - " + v + "\n")
			}
		}
		if s := shorthandHint(f.Type); s != "" {
			b.WriteString("\n        Shorthand syntax:\n            " + s + "\n")
		}
		b.WriteString("\n")
	}
	if len(unused) > 0 {
		wrap(&b, "Read, and without effect on Anylift (they describe GameLift's own hosting): --"+
			strings.Join(unused, ", --")+".", "    ")
		b.WriteString("\n")
	}
	if c.Pages != "" {
		fmt.Fprintf(&b, pagingHelp, c.Op, c.Pages)
	}
	b.WriteString(globalHelp)
	_, err := io.WriteString(w, b.String())
	return err
}

const pagingHelp = `    --starting-token (string)
        Where to start: a NextToken printed by an earlier call.

    --page-size (integer)
        How many results each call to the service asks for. %[1]s is
        called page after page until every result (%[2]s) is in.

    --max-items (integer)
        The most results to print; when there are more, NextToken says where
        to go on (pass it as --starting-token).

`

// shorthandHint is the shorthand form of a structure, map, or list of
// them or of scalars: "Key=string,Value=string ...".
func shorthandHint(t reflect.Type) string {
	t = deref(t)
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		if inner := shorthandHint(t.Elem()); inner != "" {
			return inner + " ..."
		}
		return typeWord(deref(t.Elem())) + " " + typeWord(deref(t.Elem())) + " ..."
	case t.Kind() == reflect.Map:
		return "KeyName1=" + typeWord(t.Elem()) + ",KeyName2=" + typeWord(t.Elem())
	case t.Kind() == reflect.Struct && t != timeType:
		var parts []string
		for i := 0; i < t.NumField(); i++ {
			parts = append(parts, t.Field(i).Name+"="+typeWord(deref(t.Field(i).Type)))
		}
		return strings.Join(parts, ",")
	}
	return ""
}

func typeWord(t reflect.Type) string {
	switch {
	case t == timeType:
		return "timestamp"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Int32 || t.Kind() == reflect.Int64:
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "double"
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		return "[" + typeWord(deref(t.Elem())) + ",...]"
	case t.Kind() == reflect.Struct:
		return "{...}"
	case t.Kind() == reflect.Map:
		return "{KeyName=...}"
	}
	return "blob"
}

// wrap writes text's paragraphs wrapped at 79 columns under indent.
func wrap(b *strings.Builder, text, indent string) {
	for i, para := range strings.Split(text, "\n\n") {
		if i > 0 {
			b.WriteString("\n")
		}
		line, empty := indent, true
		hang := indent
		if strings.HasPrefix(para, "- ") {
			hang = indent + "  "
		}
		for _, word := range strings.Fields(para) {
			if !empty && len(line)+1+len(word) > 79 {
				b.WriteString(line + "\n")
				line, empty = hang, true
			}
			if !empty {
				line += " "
			}
			line, empty = line+word, false
		}
		b.WriteString(line + "\n")
	}
}
