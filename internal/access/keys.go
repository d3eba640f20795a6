package access

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Key is an access key the API accepts, with what it may do.
type Key struct {
	ID, Secret string
	// Policy limits the key's rights; nil means every right.
	Policy *Policy
	// PolicyFile is the file Policy was read from ("" without one).
	PolicyFile string
	// Rate is the key's own rate limit; nil takes the server's.
	Rate *Rate
}

// Allowed reports whether the key may perform action on every one of
// resources (on "*" when there are none), and when not, the first
// resource refused and whether a statement denied it explicitly.
func (k *Key) Allowed(action string, resources []string) (ok bool, refused string, explicit bool) {
	if k == nil || k.Policy == nil {
		return true, "", false
	}
	if len(resources) == 0 {
		resources = []string{"*"}
	}
	for _, r := range resources {
		switch k.Policy.Decide(action, r) {
		case Denied:
			return false, r, true
		case NotAllowed:
			return false, r, false
		}
	}
	return true, "", false
}

// Set is an immutable set of keys by id.
type Set struct {
	keys map[string]*Key
}

// NewSet holds keys; a key id given twice is an error.
func NewSet(keys ...*Key) (*Set, error) {
	s := &Set{keys: make(map[string]*Key, len(keys))}
	for _, k := range keys {
		if _, dup := s.keys[k.ID]; dup {
			return nil, fmt.Errorf("access key %s is given twice", k.ID)
		}
		s.keys[k.ID] = k
	}
	return s, nil
}

// Static is a set of keys with every right, from id → secret pairs.
func Static(secrets map[string]string) *Set {
	s := &Set{keys: make(map[string]*Key, len(secrets))}
	for id, secret := range secrets {
		s.keys[id] = &Key{ID: id, Secret: secret}
	}
	return s
}

// Key returns the key of that id.
func (s *Set) Key(id string) (*Key, bool) {
	k, ok := s.keys[id]
	return k, ok
}

// Len is the number of keys.
func (s *Set) Len() int { return len(s.keys) }

// IDs lists the key ids, in no order.
func (s *Set) IDs() []string {
	out := make([]string, 0, len(s.keys))
	for id := range s.keys {
		out = append(out, id)
	}
	return out
}

// MaxCredentialsBytes caps a credentials file.
const MaxCredentialsBytes = 4 << 20

// CredentialsFile is a parsed credentials file: its keys, and every file
// read to make them (the credentials file first, then each policy file
// once) with its metadata taken just before it was read (nil when it
// could not be), which a Keyring watches for changes.
type CredentialsFile struct {
	Keys  []*Key
	Files []string
	Stats []os.FileInfo
}

// read reads a file of at most max bytes, noting it and its metadata.
func (cf *CredentialsFile) read(path string, max int64) ([]byte, error) {
	fi, _ := os.Stat(path)
	cf.Files, cf.Stats = append(cf.Files, path), append(cf.Stats, fi)
	return readLimited(path, max)
}

// ReadCredentials reads a credentials file. Each line is
//
//	ACCESS_KEY_ID SECRET_KEY [POLICY_FILE [rate=N] [burst=N]]
//
// fields separated by spaces or tabs; the first two may instead be joined
// by ':' or '=' (ACCESS_KEY_ID:SECRET_KEY). POLICY_FILE is the path of the
// key's policy, relative to the credentials file's directory, or "-" for
// none (every right). rate (requests per second, 0 for no limit) and
// burst override the server's rate limit for the key; burst defaults to
// twice the rate. Blank lines and lines starting with '#' are skipped, and
// a field starting with '#' after the key and secret starts a comment. A
// key id given twice, a policy that cannot be read or parsed (known as
// for ParsePolicy), any other field: an error naming the file and line.
// The files read are listed even when there is an error.
func ReadCredentials(path string, known []string) (*CredentialsFile, error) {
	out := &CredentialsFile{}
	data, err := out.read(path, MaxCredentialsBytes)
	if err != nil {
		return out, fmt.Errorf("credentials file: %w", err)
	}
	policies := map[string]*Policy{}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxCredentialsBytes)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		at := fmt.Sprintf("credentials file %s:%d", path, line)
		k, policyPath, err := parseLine(s)
		if err != nil {
			return out, fmt.Errorf("%s: %w", at, err)
		}
		if first, dup := seen[k.ID]; dup {
			return out, fmt.Errorf("%s: access key %s is already given on line %d", at, k.ID, first)
		}
		seen[k.ID] = line
		if policyPath != "" {
			if !filepath.IsAbs(policyPath) {
				policyPath = filepath.Join(filepath.Dir(path), policyPath)
			}
			p, ok := policies[policyPath]
			if !ok {
				if p, err = out.readPolicy(policyPath, known); err != nil {
					return out, fmt.Errorf("%s: %w", at, err)
				}
				policies[policyPath] = p
			}
			k.Policy, k.PolicyFile = p, policyPath
		}
		out.Keys = append(out.Keys, k)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("credentials file %s: %w", path, err)
	}
	return out, nil
}

func (cf *CredentialsFile) readPolicy(path string, known []string) (*Policy, error) {
	data, err := cf.read(path, MaxPolicyBytes)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	p, err := ParsePolicy(data, known)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// readLimited reads a file of at most max bytes.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, nil
}

// parseLine parses one line of a credentials file.
func parseLine(s string) (*Key, string, error) {
	fields := strings.Fields(s)
	k := &Key{}
	var rest []string
	switch {
	case strings.ContainsAny(fields[0], ":="):
		i := strings.IndexAny(fields[0], ":=")
		k.ID, k.Secret, rest = fields[0][:i], fields[0][i+1:], fields[1:]
	case len(fields) >= 3 && (fields[1] == ":" || fields[1] == "="):
		k.ID, k.Secret, rest = fields[0], fields[2], fields[3:]
	case len(fields) >= 2:
		k.ID, k.Secret, rest = fields[0], fields[1], fields[2:]
	}
	if k.ID == "" || k.Secret == "" {
		return nil, "", fmt.Errorf("want \"ACCESS_KEY_ID SECRET_KEY [POLICY_FILE [rate=N] [burst=N]]\"")
	}
	for i, f := range rest {
		if strings.HasPrefix(f, "#") { // a comment to the end of the line
			rest = rest[:i]
			break
		}
	}
	policy := ""
	if len(rest) > 0 {
		if rest[0] != "-" {
			policy = rest[0]
		}
		rest = rest[1:]
	}
	for _, opt := range rest {
		name, v, _ := strings.Cut(opt, "=")
		if k.Rate == nil {
			k.Rate = &Rate{}
		}
		switch name {
		case "rate":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > MaxRate || f != f {
				return nil, "", fmt.Errorf("rate=%s: want requests per second, from 0 (no limit) to %g", v, float64(MaxRate))
			}
			k.Rate.PerSecond = f
		case "burst":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxBurst {
				return nil, "", fmt.Errorf("burst=%s: want a whole number of requests from 1 to %d", v, MaxBurst)
			}
			k.Rate.Burst = n
		default:
			return nil, "", fmt.Errorf("%q: after the policy file a line takes only rate=N and burst=N", opt)
		}
	}
	if k.Rate != nil && k.Rate.Burst == 0 {
		k.Rate.Burst = max(1, int(2*k.Rate.PerSecond+0.5))
		if k.Rate.Burst > MaxBurst {
			k.Rate.Burst = MaxBurst
		}
	}
	return k, policy, nil
}
