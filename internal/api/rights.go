package api

import (
	"net/http"
	"strings"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/cluster"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/wire"
)

// Keys with limited rights and per-key rate limits. Both answer with AWS
// common errors, not GameLift's own exceptions (the model lists neither),
// with status 400 as AWS JSON services send them: AccessDeniedException,
// and ThrottlingException, which botocore and the AWS SDKs retry by
// themselves with backoff.

const (
	throttled = "ThrottlingException"
	denied    = "AccessDeniedException"
)

// admit applies the signing key's rate limit, at the node the client
// reached: a request relayed from there was counted there.
func (h *Handler) admit(r *http.Request, s *Signed) *authError {
	if h.limiter == nil || h.relay != nil && cluster.IsRelayed(r.Context()) {
		return nil
	}
	var own *access.Rate
	if s.key != nil {
		own = s.key.Rate
	}
	if !h.limiter.Allow(s.accessKey, own) {
		return &authError{throttled, http.StatusBadRequest, "Rate exceeded"}
	}
	return nil
}

// authorize checks that the signing key may perform op on every resource
// in names (an operation input; "*" when it names none), and answers
// AccessDeniedException otherwise, naming the first resource refused.
func (h *Handler) authorize(s *Signed, op string, in any) *authError {
	if s.key == nil || s.key.Policy == nil {
		return nil
	}
	action := access.Service + ":" + op
	resources := Resources(h.account, in)
	ok, refused, explicit := s.key.Allowed(action, resources)
	if ok {
		return nil
	}
	return &authError{denied, http.StatusBadRequest, DeniedMessage(h.account, s.accessKey, action, refused, explicit)}
}

// DeniedMessage is the message of an AccessDeniedException, in IAM's
// words: the principal is the access key, as an IAM user of the account.
func DeniedMessage(a game.Account, keyID, action, resource string, explicit bool) string {
	msg := "User: arn:" + game.Partition + ":iam::" + a.ID + ":user/" + keyID + " is not authorized to perform: " +
		action + " on resource: " + resource
	if explicit {
		return msg + " with an explicit deny in an identity-based policy"
	}
	return msg + " because no identity-based policy allows the " + action + " action"
}

// Resources is the ARNs of the resources an operation input names, each
// as the service writes it (an id or name given in its ARN form is read
// as the operation reads it, and written back with this service's region
// and account): nil when it names none.
func Resources(a game.Account, in any) []string {
	rn, ok := in.(wire.ResourceNamer)
	if !ok {
		return nil
	}
	var out []string
	rn.Resources(func(typ, id string) {
		arn := resourceARN(a, typ, id)
		for _, seen := range out {
			if seen == arn {
				return
			}
		}
		out = append(out, arn)
	})
	return out
}

func resourceARN(a game.Account, typ, id string) string {
	switch typ {
	case "fleet":
		return a.FleetARN(game.ResourceID(id, typ))
	case "alias":
		return a.AliasARN(game.ResourceID(id, typ))
	case "gamesessionqueue":
		return a.QueueARN(game.ResourceID(id, typ))
	case "matchmakingconfiguration":
		return a.MatchmakingConfigurationARN(game.ResourceID(id, typ))
	case "matchmakingruleset":
		return a.MatchmakingRuleSetARN(game.ResourceID(id, typ))
	case "location":
		return a.LocationARN(game.ResourceID(id, typ))
	case "containergroupdefinition":
		// The definition as a whole, whichever version an ARN names.
		name, _, _ := game.ContainerGroupRef(id)
		return a.ContainerGroupDefinitionARN(name, 0)
	case "arn":
		// A resource ARN of any type (tagging): its type and id, in
		// this service's region and account.
		if t, rest, ok := resourceOf(id); ok {
			return resourceARN(a, t, rest)
		}
	}
	return id // a game session's id is its ARN, looked up as given
}

// resourceOf splits a GameLift ARN's resource part into type and id as
// the tagging operations read it: what precedes and follows the first '/'
// after the fifth ':'.
func resourceOf(arn string) (typ, id string, ok bool) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "gamelift" {
		return "", "", false
	}
	typ, id, ok = strings.Cut(parts[5], "/")
	switch typ {
	case "fleet", "alias", "gamesessionqueue", "matchmakingconfiguration", "matchmakingruleset", "location", "containergroupdefinition":
		return typ, id, ok && !strings.HasPrefix(id, "arn:")
	}
	return "", "", false
}
