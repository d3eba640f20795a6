package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

func asGameError(err error, ge **game.Error) bool { return errors.As(err, ge) }

func urlPathEscape(s string) string { return url.PathEscape(s) }

// sessionFilter is the game session list's filter form.
type sessionFilter struct {
	Status   string
	Name     string // substring, any case
	Property string // key=value, exact
}

func (f sessionFilter) match(s *game.GameSession) bool {
	if f.Name != "" && !strings.Contains(strings.ToLower(s.Name), strings.ToLower(f.Name)) {
		return false
	}
	if f.Property == "" {
		return true
	}
	k, v, hasValue := strings.Cut(f.Property, "=")
	for _, p := range s.Properties {
		if p.Key == strings.TrimSpace(k) && (!hasValue || p.Value == strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}

// sessionStatuses are the choices of the status filter.
var sessionStatuses = []string{game.SessionActivating, game.SessionActive, game.SessionTerminating,
	game.SessionTerminated, game.SessionError}

const (
	sessionsScanned = 5000 // most sessions one list page reads
	sessionsShown   = 200  // most it shows, newest first
)

func (c *Console) sessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	flt := sessionFilter{Status: q.Get("status"), Name: q.Get("name"), Property: q.Get("property")}
	var f *game.Fleet
	var shown []*game.GameSession
	err := c.read(r, func(tx store.Tx) error {
		var err error
		if f, err = tx.GetFleet(r.PathValue("id")); err != nil {
			return err
		}
		token := ""
		for scanned := 0; scanned < sessionsScanned; {
			list, next, err := tx.ListGameSessions(store.SessionFilter{FleetID: f.ID, Status: flt.Status}, store.Page{Limit: 500, Token: token})
			if err != nil {
				return err
			}
			scanned += len(list)
			for _, s := range list {
				if flt.match(s) {
					shown = append(shown, s)
				}
			}
			if len(shown) > sessionsShown {
				shown = shown[len(shown)-sessionsShown:]
			}
			if next == "" {
				break
			}
			token = next
		}
		return nil
	})
	if err != nil {
		c.readFailed(w, r, "Fleet "+r.PathValue("id"), err)
		return
	}
	for i, j := 0, len(shown)-1; i < j; i, j = i+1, j-1 {
		shown[i], shown[j] = shown[j], shown[i]
	}
	c.render(w, r, http.StatusOK, "sessions", "Game sessions of "+f.Name, struct {
		Fleet    *game.Fleet
		Filter   sessionFilter
		Statuses []string
		Sessions []*game.GameSession
	}{f, flt, sessionStatuses, shown})
}

func (c *Console) session(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	var gs *game.GameSession
	var players []*game.PlayerSession
	err := c.read(r, func(tx store.Tx) error {
		var err error
		if gs, err = tx.GetGameSession(id); err != nil {
			return err
		}
		players, _, err = tx.ListPlayerSessions(store.PlayerFilter{GameSessionID: id}, store.Page{Limit: maxListed})
		return err
	})
	if err != nil || id == "" {
		if err == nil {
			err = game.Errorf(game.NotFound, "no id")
		}
		c.readFailed(w, r, "Game session "+id, err)
		return
	}
	c.render(w, r, http.StatusOK, "session", "Game session "+gs.IDString, struct {
		Session *game.GameSession
		Players []*game.PlayerSession
	}{gs, players})
}

// terminate is TerminateGameSession from the session page: the game
// server is told to end the session.
func (c *Console) terminate(w http.ResponseWriter, r *http.Request) {
	id, mode := r.PostFormValue("id"), "TRIGGER_ON_PROCESS_TERMINATE" // the server ends it (no Agent to force it)
	err := c.route(r, sessionFleet(id))
	if err == nil {
		_, err = c.cfg.Sessions.TerminateGameSession(r.Context(), &wire.TerminateGameSessionInput{GameSessionId: &id, TerminationMode: &mode})
	}
	if err != nil {
		c.actionFailed(w, r, "Game session "+id, err)
		return
	}
	http.Redirect(w, r, "/console/session?id="+url.QueryEscape(id), http.StatusSeeOther)
}
