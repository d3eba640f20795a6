// Package access holds what an access key may do: the keys the API
// accepts (a credentials file, re-read when it changes), the IAM-style
// policy that limits a key's rights, and the per-key rate limit. Standard
// library only; the API, the console and the event stream ask it.
package access

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxPolicyBytes caps a policy document. IAM's own limit for a managed
// policy is 6,144 characters; this leaves room for indentation.
const MaxPolicyBytes = 64 << 10

// Service is the action prefix and ARN service of every action and
// resource a policy may name.
const Service = "gamelift"

// Decision is the outcome of evaluating a policy for one action on one
// resource.
type Decision int

const (
	// NotAllowed: no statement allows it (an implicit deny).
	NotAllowed Decision = iota
	// Allowed: a statement allows it and none denies it.
	Allowed
	// Denied: a statement denies it (an explicit deny, which wins).
	Denied
)

// Policy is a parsed identity policy: statements of Effect, Action or
// NotAction, Resource or NotResource. It is immutable.
type Policy struct {
	statements []statement
	digest     [sha256.Size]byte // of the document, to tell a changed policy
}

type statement struct {
	deny        bool
	notAction   bool
	actions     []string // patterns: "*" or "gamelift:<pattern>"
	notResource bool
	resources   []string // patterns: "*" or an ARN pattern
}

// Decide evaluates p for action ("gamelift:CreateGameSession") on
// resource (an ARN, or "*" when the operation names none), as IAM does:
// an explicit Deny wins, then an Allow is needed, and anything else is
// not allowed. Actions compare without regard to case, resources
// exactly; '*' and '?' are wildcards in both.
func (p *Policy) Decide(action, resource string) Decision {
	allowed := false
	for i := range p.statements {
		s := &p.statements[i]
		if anyMatch(s.actions, action, true) == s.notAction || anyMatch(s.resources, resource, false) == s.notResource {
			continue
		}
		if s.deny {
			return Denied
		}
		allowed = true
	}
	if allowed {
		return Allowed
	}
	return NotAllowed
}

func anyMatch(patterns []string, s string, foldCase bool) bool {
	for _, p := range patterns {
		if match(p, s, foldCase) {
			return true
		}
	}
	return false
}

// ParsePolicy parses an IAM-style identity policy strictly: members are
// case-sensitive and known (Version, Id, Statement; Sid, Effect, Action,
// NotAction, Resource, NotResource), none twice; Condition and Principal
// are refused rather than ignored. Every action must be a gamelift action
// and, when known is not nil, match at least one of the action names in
// known (catching a misspelt name); every resource is "*" or a gamelift
// ARN pattern. The error says where the problem is
// ("Statement[1].Action[0]: ...").
func ParsePolicy(data []byte, known []string) (*Policy, error) {
	if len(data) > MaxPolicyBytes {
		return nil, fmt.Errorf("the policy is %d bytes, more than the %d allowed", len(data), MaxPolicyBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON document: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the policy's JSON object")
	}
	top, err := object(raw, "the policy")
	if err != nil {
		return nil, err
	}
	p := &Policy{digest: sha256.Sum256(data)}
	for _, name := range top.order {
		v := top.members[name]
		switch name {
		case "Version":
			var s string
			if json.Unmarshal(v, &s) != nil || (s != "2012-10-17" && s != "2008-10-17") {
				return nil, fmt.Errorf(`Version: must be "2012-10-17" (or "2008-10-17"), not %s`, v)
			}
		case "Id":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, errors.New("Id: must be a string")
			}
		case "Statement":
			if p.statements, err = statements(v, known); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown member %q (a policy has Version, Id and Statement; names are case-sensitive)", name)
		}
	}
	if _, ok := top.members["Statement"]; !ok {
		return nil, errors.New("Statement: missing")
	}
	return p, nil
}

// statements parses Statement: one statement object or a non-empty list.
func statements(v json.RawMessage, known []string) ([]statement, error) {
	var list []json.RawMessage
	switch firstByte(v) {
	case '{':
		list = []json.RawMessage{v}
	case '[':
		if err := json.Unmarshal(v, &list); err != nil || len(list) == 0 {
			return nil, errors.New("Statement: must be a statement object or a non-empty list of them")
		}
	default:
		return nil, errors.New("Statement: must be a statement object or a non-empty list of them")
	}
	out := make([]statement, 0, len(list))
	sids := map[string]bool{}
	for i, raw := range list {
		where := "Statement"
		if firstByte(v) == '[' {
			where = fmt.Sprintf("Statement[%d]", i)
		}
		s, sid, err := parseStatement(raw, where, known)
		if err != nil {
			return nil, err
		}
		if sid != "" {
			if sids[sid] {
				return nil, fmt.Errorf("%s.Sid: %q is used by another statement; a Sid is unique within a policy", where, sid)
			}
			sids[sid] = true
		}
		out = append(out, s)
	}
	return out, nil
}

func parseStatement(raw json.RawMessage, where string, known []string) (statement, string, error) {
	var s statement
	obj, err := object(raw, where)
	if err != nil {
		return s, "", err
	}
	var sid string
	for _, name := range obj.order {
		v := obj.members[name]
		at := where + "." + name
		switch name {
		case "Sid":
			if json.Unmarshal(v, &sid) != nil || !alnum(sid) {
				return s, "", fmt.Errorf("%s: must be a string of letters and digits", at)
			}
		case "Effect":
			var e string
			json.Unmarshal(v, &e)
			switch e {
			case "Allow":
			case "Deny":
				s.deny = true
			default:
				return s, "", fmt.Errorf(`%s: must be "Allow" or "Deny", not %s`, at, v)
			}
		case "Action", "NotAction":
			list, err := strings1(v, at)
			if err != nil {
				return s, "", err
			}
			for i, a := range list {
				if err := checkAction(a, known); err != nil {
					return s, "", fmt.Errorf("%s: %w", item(at, v, i), err)
				}
			}
			s.actions, s.notAction = list, name == "NotAction"
		case "Resource", "NotResource":
			list, err := strings1(v, at)
			if err != nil {
				return s, "", err
			}
			for i, r := range list {
				if err := checkResource(r); err != nil {
					return s, "", fmt.Errorf("%s: %w", item(at, v, i), err)
				}
			}
			s.resources, s.notResource = list, name == "NotResource"
		case "Condition":
			return s, "", fmt.Errorf("%s: conditions are not supported (Anylift evaluates Effect, Action and Resource); remove it, or express the rule through Resource", at)
		case "Principal", "NotPrincipal":
			return s, "", fmt.Errorf("%s: a key's policy is an identity policy, which names no principal; remove it", at)
		default:
			return s, "", fmt.Errorf("%s: unknown member (a statement has Sid, Effect, Action or NotAction, Resource or NotResource; names are case-sensitive)", at)
		}
	}
	_, hasEffect := obj.members["Effect"]
	_, hasAction := obj.members["Action"]
	_, hasNotAction := obj.members["NotAction"]
	_, hasResource := obj.members["Resource"]
	_, hasNotResource := obj.members["NotResource"]
	switch {
	case !hasEffect:
		return s, "", fmt.Errorf("%s: Effect is missing", where)
	case hasAction == hasNotAction:
		return s, "", fmt.Errorf("%s: exactly one of Action and NotAction is needed", where)
	case hasResource == hasNotResource:
		return s, "", fmt.Errorf("%s: exactly one of Resource and NotResource is needed", where)
	}
	return s, sid, nil
}

// item names element i of the list at (or at itself, for a single string).
func item(at string, v json.RawMessage, i int) string {
	if firstByte(v) == '[' {
		return fmt.Sprintf("%s[%d]", at, i)
	}
	return at
}

// checkAction accepts "*" and "gamelift:<pattern>" whose pattern is
// letters, digits and wildcards, and which matches a known action.
func checkAction(a string, known []string) error {
	if a == "*" {
		return nil
	}
	svc, name, ok := strings.Cut(a, ":")
	if !ok || name == "" {
		return fmt.Errorf("%q: an action has the form %s:<Operation> (wildcards * and ? allowed) or is *", a, Service)
	}
	if !strings.EqualFold(svc, Service) {
		return fmt.Errorf("%q: only %s actions can be granted here, not %s ones", a, Service, svc)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c != '*' && c != '?' && !isAlnum(c) {
			return fmt.Errorf("%q: an action name is letters and digits, with * and ? as wildcards", a)
		}
	}
	if known == nil {
		return nil
	}
	for _, k := range known {
		if match(name, k, true) {
			return nil
		}
	}
	return fmt.Errorf("%q matches no %s action (is it misspelt?)", a, Service)
}

// checkResource accepts "*" and arn:<partition>:gamelift:<region>:<account>:<resource>
// patterns.
func checkResource(r string) error {
	if r == "*" {
		return nil
	}
	if strings.Contains(r, "${") {
		return fmt.Errorf("%q: policy variables are not supported", r)
	}
	parts := strings.SplitN(r, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[5] == "" {
		return fmt.Errorf("%q: a resource is * or an ARN, arn:aws:%s:<region>:<account>:<type>/<id> (wildcards * and ? allowed)", r, Service)
	}
	if parts[2] != Service {
		return fmt.Errorf("%q: only %s resources can be named here", r, Service)
	}
	for i := 0; i < len(r); i++ {
		if r[i] < 0x20 || r[i] == 0x7f {
			return fmt.Errorf("%q: control characters are not allowed", r)
		}
	}
	return nil
}

// strings1 decodes a string or a non-empty list of strings.
func strings1(v json.RawMessage, at string) ([]string, error) {
	switch firstByte(v) {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", at, err)
		}
		return []string{s}, nil
	case '[':
		var list []string
		if err := json.Unmarshal(v, &list); err == nil && len(list) > 0 {
			return list, nil
		}
	}
	return nil, fmt.Errorf("%s: must be a string or a non-empty list of strings", at)
}

// members is a JSON object's members, in document order.
type members struct {
	members map[string]json.RawMessage
	order   []string
}

// object decodes a JSON object, refusing a member named twice (which
// encoding/json would resolve silently, keeping the last).
func object(raw json.RawMessage, where string) (*members, error) {
	if firstByte(raw) != '{' {
		return nil, fmt.Errorf("%s: must be a JSON object", where)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // {
	m := &members{members: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s.%s: %v", where, name, err)
		}
		if _, dup := m.members[name]; dup {
			return nil, fmt.Errorf("%s: member %q is given twice", where, name)
		}
		m.members[name] = v
		m.order = append(m.order, name)
	}
	return m, nil
}

func firstByte(v json.RawMessage) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
