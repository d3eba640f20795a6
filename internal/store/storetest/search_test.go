package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/search"
	"github.com/anylift/anylift/internal/store"
)

// searchEpoch is the creation time of the first seeded session; each next
// one is a second later.
var searchEpoch = time.UnixMilli(1767225600000).UTC()

type seed struct {
	name, loc, status string
	max, cur          int
	props             string // "k=v,k=v"
	fleet             string
}

// seedSearch inserts the sessions every search test runs over.
func seedSearch(t *testing.T, st store.Store) {
	seeds := []seed{
		{name: "alpha", loc: "custom-a", max: 10, cur: 2, props: "mode=ffa,map=suzuka,diff=novice"},
		{name: "beta", loc: "custom-a", max: 4, cur: 4, props: "mode=ffa,map=silverstone,diff=expert"},
		{name: "Matt's Game", loc: "custom-b", max: 8, cur: 0, props: "mode=team,diff=novice"},
		{name: "gamma", loc: "custom-b", max: 2, cur: 1},
		{name: `quote"back\slash`, loc: "custom-a", max: 6, cur: 6, props: "mode=ffa,a.b=dotted"},
		{name: "ended", loc: "custom-a", max: 6, cur: 0, props: "mode=ffa", status: game.SessionTerminated},
		{name: "elsewhere", loc: "custom-a", max: 6, cur: 0, props: "mode=ffa", fleet: "fleet-other"},
	}
	Update(t, st, func(tx store.Tx) error {
		for i, sd := range seeds {
			if err := tx.InsertGameSession(seedSession(i, sd)); err != nil {
				return err
			}
		}
		return nil
	})
}

func seedSession(i int, sd seed) *game.GameSession {
	if sd.fleet == "" {
		sd.fleet = "fleet-search"
	}
	if sd.status == "" {
		sd.status = game.SessionActive
	}
	idString := fmt.Sprintf("gsess-%d", i)
	s := &game.GameSession{
		ID: sessionARN(sd.fleet, idString), IDString: idString, Name: sd.name, FleetID: sd.fleet, Location: sd.loc,
		CreationTime: searchEpoch.Add(time.Duration(i) * time.Second), Status: sd.status,
		MaximumPlayerSessionCount: sd.max, CurrentPlayerSessionCount: sd.cur, PlayerSessionCreationPolicy: "ACCEPT_ALL",
	}
	for _, kv := range strings.Split(sd.props, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			s.Properties = append(s.Properties, game.Property{Key: k, Value: v})
		}
	}
	return s
}

func sessionARN(fleet, idString string) string {
	return "arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/" + idString
}

// searchAll pages through q, limit per page, checking the tokens, and
// returns the names found.
func searchAll(t *testing.T, st store.Store, q store.SearchQuery, limit int) []string {
	t.Helper()
	var names []string
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		var list []*game.GameSession
		var next string
		View(t, st, func(tx store.Tx) error {
			var err error
			list, next, err = tx.SearchGameSessions(q, store.Page{Limit: limit, Token: token})
			return err
		})
		if len(list) > limit || (next != "" && len(list) != limit) || pages > 20 {
			t.Fatalf("page of %d with token %q at limit %d", len(list), next, limit)
		}
		for _, s := range list {
			names = append(names, s.Name)
		}
		if next == "" {
			return names
		}
		if seen[next] {
			t.Fatalf("token %q repeated", next)
		}
		seen[next] = true
		token = next
	}
}

func TestSearchGameSessions(t *testing.T) {
	alpha, beta, matt, gamma, quote := "alpha", "beta", "Matt's Game", "gamma", `quote"back\slash`
	created := func(i int) int64 { return searchEpoch.Add(time.Duration(i) * time.Second).UnixMilli() }
	cases := []struct {
		filter, sort, loc string
		want              []string
	}{
		{want: []string{alpha, beta, matt, gamma, quote}},
		{loc: "custom-b", want: []string{matt, gamma}},
		{filter: `gameSessionProperties.mode = 'ffa' AND gameSessionProperties.map = 'suzuka' OR gameSessionProperties.map = 'silverstone'`, want: []string{alpha, beta}},
		// A OR B AND C is A OR (B AND C).
		{filter: `hasAvailablePlayerSessions = false OR gameSessionProperties.mode = 'team' AND maximumSessions > 100`, want: []string{beta, quote}},
		{filter: `NOT gameSessionProperties.mode = 'ffa'`, want: []string{matt, gamma}},
		{filter: `gameSessionProperties.mode <> 'ffa'`, want: []string{matt}},
		{filter: `NOT gameSessionProperties.mode <> 'ffa'`, want: []string{alpha, beta, gamma, quote}},
		{filter: `NOT (gameSessionProperties.mode = 'ffa' OR maximumSessions < 3)`, want: []string{matt}},
		{filter: `gameSessionProperties.a.b = 'dotted'`, want: nil},
		{filter: `gameSessionName = 'Matt\'s Game'`, want: []string{matt}},
		{filter: `gameSessionName = "quote\"back\\slash"`, want: []string{quote}},
		{filter: `gameSessionName = 'ALPHA'`, want: nil},
		{filter: `gameSessionName = 'x\' OR 1=1 --' OR gameSessionProperties.mode = '\'; DROP TABLE game_sessions; --'`, want: nil},
		{filter: `gameSessionName <> 'alpha' and gameSessionName<>'beta'`, want: []string{matt, gamma, quote}},
		{filter: `maximumSessions >= 6 AND playerSessionCount < 6`, want: []string{alpha, matt}},
		{filter: fmt.Sprintf(`creationTimeMillis > %d`, created(1)), want: []string{matt, gamma, quote}},
		{filter: fmt.Sprintf(`creationTimeMillis<=%d`, created(1)), want: []string{alpha, beta}},
		{filter: `hasAvailablePlayerSessions = TRUE`, want: []string{alpha, matt, gamma}},
		{filter: `hasAvailablePlayerSessions <> true`, want: []string{beta, quote}},
		{filter: `gameSessionId = '` + sessionARN("fleet-search", "gsess-3") + `'`, want: []string{gamma}},
		{filter: `gameSessionProperties.mode = 'ffa'`, loc: "custom-a", want: []string{alpha, beta, quote}},
		{sort: `playerSessionCount DESC`, want: []string{quote, beta, alpha, gamma, matt}},
		{sort: `maximumSessions ASC`, want: []string{gamma, beta, quote, matt, alpha}},
		{sort: `creationTimeMillis DESC`, want: []string{quote, gamma, matt, beta, alpha}},
		{sort: `gameSessionName ASC`, want: []string{matt, alpha, beta, gamma, quote}},
		{sort: `gameSessionId DESC`, want: []string{quote, gamma, matt, beta, alpha}},
		{sort: `hasAvailablePlayerSessions DESC`, want: []string{gamma, matt, alpha, quote, beta}},
		{sort: `gameSessionProperties.diff ASC`, want: []string{beta, alpha, matt, gamma, quote}},
		{sort: `gameSessionProperties.diff DESC`, want: []string{matt, alpha, beta, quote, gamma}},
		{filter: `hasAvailablePlayerSessions = true`, sort: `gameSessionProperties.diff DESC`, want: []string{matt, alpha, gamma}},
		{filter: `gameSessionProperties.mode = 'ffa'`, sort: `playerSessionCount ASC`, want: []string{alpha, beta, quote}},
	}
	Each(t, func(t *testing.T, st store.Store) {
		seedSearch(t, st)
		for _, tc := range cases {
			q := store.SearchQuery{FleetID: "fleet-search", Location: tc.loc}
			var err error
			if tc.filter != "" {
				if q.Filter, err = search.ParseFilter(tc.filter); err != nil {
					t.Fatal(err)
				}
			}
			if tc.sort != "" {
				s, err := search.ParseSort(tc.sort)
				if err != nil {
					t.Fatal(err)
				}
				q.Sort = &s
			}
			for _, limit := range []int{1, 2, 20} {
				if got := searchAll(t, st, q, limit); !slices.Equal(got, tc.want) {
					t.Errorf("filter %q sort %q location %q limit %d: got %q, want %q", tc.filter, tc.sort, tc.loc, limit, got, tc.want)
				}
			}
		}
	})
}

func TestSearchTokens(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		seedSearch(t, st)
		q := store.SearchQuery{FleetID: "fleet-search"}
		var next string
		View(t, st, func(tx store.Tx) error {
			var err error
			_, next, err = tx.SearchGameSessions(q, store.Page{Limit: 2})
			return err
		})
		sorted := q
		sorted.Sort = &search.Sort{Operand: search.Operand{Field: search.PlayerSessionCount}}
		other := q
		other.Location = "custom-a"
		for name, tc := range map[string]struct {
			q     store.SearchQuery
			token string
		}{
			"another sort":     {sorted, next},
			"another location": {other, next},
			"garbage":          {q, "not-a-token"},
		} {
			err := st.View(t.Context(), func(tx store.Tx) error {
				_, _, err := tx.SearchGameSessions(tc.q, store.Page{Limit: 2, Token: tc.token})
				return err
			})
			if !game.IsKind(err, game.InvalidRequest) {
				t.Errorf("%s: %v, want InvalidRequest", name, err)
			}
		}
	})
}

// TestSearchCommonProperty covers a property value too common to start
// the search from (1,000 sessions or more): the results are the same.
func TestSearchCommonProperty(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		Update(t, st, func(tx store.Tx) error {
			for i := range 1100 {
				sd := seed{name: fmt.Sprintf("s%04d", i), loc: "custom-a", max: 8, cur: i % 8, props: "mode=ffa"}
				if i%100 == 0 {
					sd.props = "mode=ffa,map=rare"
				}
				if err := tx.InsertGameSession(seedSession(i, sd)); err != nil {
					return err
				}
			}
			return nil
		})
		for filter, want := range map[string]int{
			`gameSessionProperties.mode = 'ffa' AND playerSessionCount = 3`:                                      138,
			`gameSessionProperties.mode = 'ffa' AND gameSessionProperties.map = 'rare'`:                          11,
			`gameSessionProperties.mode = 'ffa' AND gameSessionProperties.map = 'rare' AND playerSessionCount=4`: 5,
		} {
			e, err := search.ParseFilter(filter)
			if err != nil {
				t.Fatal(err)
			}
			q := store.SearchQuery{FleetID: "fleet-search", Filter: e, Sort: &search.Sort{Operand: search.Operand{Field: search.PlayerSessionCount}, Desc: true}}
			if got := searchAll(t, st, q, 20); len(got) != want {
				t.Errorf("%s: %d sessions, want %d", filter, len(got), want)
			}
		}
	})
}

// The search index of a session's properties follows every update that
// changes them, whether the transaction read the session first or not,
// and is left as it was by updates that do not change them, even when a
// failed transaction changed them and was undone.
func TestSearchFollowsPropertyUpdates(t *testing.T) {
	Each(t, func(t *testing.T, st store.Store) {
		s := seedSession(0, seed{name: "evolving", loc: "custom-a", max: 8, props: "mode=ctf"})
		Update(t, st, func(tx store.Tx) error { return tx.InsertGameSession(s) })
		found := func(filter string) bool {
			t.Helper()
			q := store.SearchQuery{FleetID: "fleet-search"}
			var err error
			if q.Filter, err = search.ParseFilter(filter); err != nil {
				t.Fatal(err)
			}
			return slices.Equal(searchAll(t, st, q, 10), []string{"evolving"})
		}
		update := func(read bool, props string, fail error) error {
			return st.Update(t.Context(), func(tx store.Tx) error {
				c := *s
				if read {
					got, err := tx.GetGameSession(s.ID)
					if err != nil {
						return err
					}
					c = *got
				}
				c.Properties = seedSession(0, seed{props: props}).Properties
				c.Name = "evolving"
				if err := tx.UpdateGameSession(&c); err != nil {
					return err
				}
				return fail
			})
		}
		undone := fmt.Errorf("undone on purpose")
		steps := []struct {
			read        bool
			props       string
			fail        error
			find, avoid string
		}{
			{read: true, props: "mode=ctf", find: `gameSessionProperties.mode = "ctf"`},
			{read: true, props: "mode=dm", find: `gameSessionProperties.mode = "dm"`, avoid: `gameSessionProperties.mode = "ctf"`},
			{read: true, props: "mode=koth", fail: undone, find: `gameSessionProperties.mode = "dm"`, avoid: `gameSessionProperties.mode = "koth"`},
			{read: false, props: "mode=dm,map=docks", find: `gameSessionProperties.map = "docks"`},
			{read: true, props: "mode=dm,map=docks", find: `gameSessionProperties.map = "docks" AND gameSessionProperties.mode = "dm"`},
			{read: true, props: "", avoid: `gameSessionProperties.mode = "dm"`},
		}
		for i, step := range steps {
			if err := update(step.read, step.props, step.fail); err != step.fail {
				t.Fatalf("step %d: %v", i, err)
			}
			if step.find != "" && !found(step.find) {
				t.Errorf("step %d: %s finds nothing", i, step.find)
			}
			if step.avoid != "" && found(step.avoid) {
				t.Errorf("step %d: %s still finds the session", i, step.avoid)
			}
		}
	})
}
