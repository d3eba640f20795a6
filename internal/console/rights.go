package console

import (
	"net/http"

	"github.com/anylift/anylift/internal/access"
	"github.com/anylift/anylift/internal/game"
)

// right is an action a page needs, and the resource it needs it on.
type right struct {
	action   string // a GameLift operation, "DescribeFleetAttributes"
	resource func(c *Console, r *http.Request) string
}

func anyResource(*Console, *http.Request) string { return "*" }

func fleetInPath(c *Console, r *http.Request) string {
	return c.account().FleetARN(r.PathValue("id"))
}

func queueInPath(c *Console, r *http.Request) string {
	return c.account().QueueARN(r.PathValue("name"))
}

// A game session's id is its ARN.
func sessionInQuery(_ *Console, r *http.Request) string { return r.URL.Query().Get("id") }
func sessionInForm(_ *Console, r *http.Request) string  { return r.PostFormValue("id") }

func (c *Console) account() game.Account {
	if c.cfg.Service == nil {
		return game.Account{}
	}
	return c.cfg.Service.Config().Account
}

// refused is the message of the first right in needs that sess's key
// lacks, or "" when it has them all.
func (c *Console) refused(r *http.Request, sess *session, needs []right) string {
	if sess.Key == nil || sess.Key.Policy == nil {
		return ""
	}
	for _, n := range needs {
		action, resource := access.Service+":"+n.action, n.resource(c, r)
		if ok, _, _ := sess.Key.Allowed(action, []string{resource}); !ok {
			return "Access key " + sess.KeyID + " is not authorized to perform " + action + " on resource " + resource + "."
		}
	}
	return ""
}
