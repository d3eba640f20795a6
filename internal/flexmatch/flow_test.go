package flexmatch

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/anylift/anylift/internal/control"
	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
	"github.com/anylift/anylift/internal/wire"
)

// duelRules is a 1v1 rule set with a skill distance rule.
const duelRules = `{"name":"duel","ruleLanguageVersion":"1.0",
 "playerAttributes":[{"name":"skill","type":"number","default":10}],
 "teams":[{"name":"red","maxPlayers":1,"minPlayers":1},{"name":"blue","maxPlayers":1,"minPlayers":1}],
 "rules":[{"name":"FairSkill","type":"distance","measurements":["avg(teams[*].players.attributes[skill])"],
   "referenceValue":"avg(flatten(teams[*].players.attributes[skill]))","maxDistance":10}]}`

// squadRules has two teams of up to two players.
const squadRules = `{"name":"squad","ruleLanguageVersion":"1.0",
 "playerAttributes":[{"name":"skill","type":"number","default":10}],
 "teams":[{"name":"red","maxPlayers":2,"minPlayers":2},{"name":"blue","maxPlayers":2,"minPlayers":2}]}`

type mmHarness struct {
	t   *testing.T
	s   *node
	st  store.Store
	now *time.Time
}

func newMMHarness(t *testing.T, rules string, cfg wire.CreateMatchmakingConfigurationInput) *mmHarness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.UnixMilli(1767225600000).UTC()
	h := &mmHarness{t: t, st: st, now: &now}
	h.s = newNode(st, control.Config{Account: game.Account{Region: "us-west-2", ID: "123456789012"}}, func() time.Time { return *h.now })
	ctx := context.Background()
	if _, err := h.s.CreateMatchmakingRuleSet(ctx, &wire.CreateMatchmakingRuleSetInput{Name: wire.String("rules"), RuleSetBody: wire.String(rules)}); err != nil {
		t.Fatal(err)
	}
	cfg.Name, cfg.RuleSetName = wire.String("cfg"), wire.String("rules")
	if cfg.RequestTimeoutSeconds == nil {
		cfg.RequestTimeoutSeconds = wire.Int32(60)
	}
	if cfg.AcceptanceRequired == nil {
		cfg.AcceptanceRequired = wire.Bool(false)
	}
	if cfg.FlexMatchMode == nil {
		cfg.FlexMatchMode = wire.String(game.FlexMatchStandalone)
	}
	if _, err := h.s.CreateMatchmakingConfiguration(ctx, &cfg); err != nil {
		t.Fatal(err)
	}
	return h
}

func player(id string, skill float64) wire.Player {
	return wire.Player{PlayerId: wire.String(id), PlayerAttributes: map[string]wire.AttributeValue{"skill": {N: &skill}}}
}

func (h *mmHarness) start(id string, players ...wire.Player) {
	h.t.Helper()
	out, err := h.s.StartMatchmaking(context.Background(), &wire.StartMatchmakingInput{TicketId: wire.String(id), ConfigurationName: wire.String("cfg"), Players: players})
	if err != nil {
		h.t.Fatal(err)
	}
	if *out.MatchmakingTicket.Status != game.TicketQueued {
		h.t.Fatalf("new ticket %s", *out.MatchmakingTicket.Status)
	}
}

func (h *mmHarness) step() {
	h.t.Helper()
	if err := h.s.StepMatchmaking(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func (h *mmHarness) ticket(id string) wire.MatchmakingTicket {
	h.t.Helper()
	out, err := h.s.DescribeMatchmaking(context.Background(), &wire.DescribeMatchmakingInput{TicketIds: []string{id}})
	if err != nil || len(out.TicketList) != 1 {
		h.t.Fatalf("describe %s: %v %v", id, out, err)
	}
	return out.TicketList[0]
}

func (h *mmHarness) wantStatus(want string, ids ...string) {
	h.t.Helper()
	for _, id := range ids {
		if got := *h.ticket(id).Status; got != want {
			h.t.Errorf("ticket %s is %s, want %s", id, got, want)
		}
	}
}

func (h *mmHarness) accept(ticket, player, typ string) error {
	_, err := h.s.AcceptMatch(context.Background(), &wire.AcceptMatchInput{TicketId: wire.String(ticket), PlayerIds: []string{player}, AcceptanceType: wire.String(typ)})
	return err
}

// events returns the matchmaking events published so far, as "type" or
// "type:acceptance" strings, and their details.
func (h *mmHarness) events() ([]string, []map[string]any) {
	h.t.Helper()
	var names []string
	var details []map[string]any
	err := h.st.View(context.Background(), func(tx store.Tx) error {
		list, err := tx.ListNotifications(0, 10000)
		for _, n := range list {
			var env struct {
				DetailType string         `json:"detail-type"`
				Detail     map[string]any `json:"detail"`
			}
			if err := json.Unmarshal(n.Envelope, &env); err != nil {
				return err
			}
			if env.DetailType != control.DetailMatchmaking {
				continue
			}
			name := env.Detail["type"].(string)
			if a, ok := env.Detail["acceptance"]; ok {
				name += ":" + a.(string)
			}
			names = append(names, name)
			details = append(details, env.Detail)
		}
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return names, details
}

func TestStandaloneMatchCompletes(t *testing.T) {
	h := newMMHarness(t, duelRules, wire.CreateMatchmakingConfigurationInput{})
	h.start("t1", player("p1", 10))
	h.start("t2", player("p2", 12))
	h.step()
	h.wantStatus(game.TicketCompleted, "t1", "t2")
	tk := h.ticket("t1")
	if tk.Players[0].Team == nil || tk.GameSessionConnectionInfo != nil || tk.EndTime == nil {
		t.Errorf("completed STANDALONE ticket = %+v", tk)
	}
	names, details := h.events()
	want := []string{evSearching, evSearching, evPotentialMatch, evSucceeded}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	if details[0]["estimatedWaitMillis"] != "NOT_AVAILABLE" || details[2]["acceptanceRequired"] != false || details[2]["matchId"] == "" {
		t.Errorf("details %v", details)
	}
	if _, ok := details[3]["gameSessionInfo"].(map[string]any)["gameSessionArn"]; ok {
		t.Errorf("STANDALONE success carries connection data: %v", details[3])
	}
}

func acceptanceConfig() wire.CreateMatchmakingConfigurationInput {
	return wire.CreateMatchmakingConfigurationInput{AcceptanceRequired: wire.Bool(true), AcceptanceTimeoutSeconds: wire.Int32(30)}
}

func TestAcceptanceAllAccept(t *testing.T) {
	h := newMMHarness(t, duelRules, acceptanceConfig())
	h.start("t1", player("p1", 10))
	h.start("t2", player("p2", 12))
	h.step()
	h.wantStatus(game.TicketRequiresAcceptance, "t1", "t2")
	if err := h.accept("t1", "p2", "ACCEPT"); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("accepting for a player of another ticket: %v", err)
	}
	if err := h.accept("t1", "p1", "ACCEPT"); err != nil {
		t.Fatal(err)
	}
	h.wantStatus(game.TicketRequiresAcceptance, "t1", "t2")
	if err := h.accept("t2", "p2", "ACCEPT"); err != nil {
		t.Fatal(err)
	}
	h.wantStatus(game.TicketCompleted, "t1", "t2")
	if err := h.accept("t2", "p2", "ACCEPT"); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("accepting after completion: %v", err)
	}
	names, details := h.events()
	want := []string{evSearching, evSearching, evPotentialMatch, evAcceptMatch, evAcceptMatch, evAcceptCompleted + ":Accepted", evSucceeded}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	if details[2]["acceptanceTimeout"] != float64(30) {
		t.Errorf("PotentialMatchCreated %v", details[2])
	}
	first := details[3]["tickets"].([]any)
	if p := first[0].(map[string]any)["players"].([]any)[0].(map[string]any); p["accepted"] != true {
		t.Errorf("AcceptMatch tickets %v", first)
	}
}

func TestAcceptanceRejectCancelsOnlyTheRejecter(t *testing.T) {
	h := newMMHarness(t, duelRules, acceptanceConfig())
	h.start("t1", player("p1", 10))
	h.start("t2", player("p2", 12))
	h.step()
	if err := h.accept("t2", "p2", "REJECT"); err != nil {
		t.Fatal(err)
	}
	h.wantStatus(game.TicketCancelled, "t2")
	h.wantStatus(game.TicketSearching, "t1")
	t1 := h.ticket("t1")
	if *t1.StatusReason != "ACCEPTANCE_FAILED" || t1.Players[0].Team != nil || !t1.StartTime.Time.Equal(*h.now) {
		t.Errorf("returned ticket %+v", t1)
	}
	if r := *h.ticket("t2").StatusReason; r != "REJECTED" {
		t.Errorf("rejecting ticket reason %s", r)
	}
	names, _ := h.events()
	want := []string{evSearching, evSearching, evPotentialMatch, evAcceptMatch, evAcceptCompleted + ":Rejected", evSearching, evCancelled}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", names, want)
	}
}

func TestAcceptanceTimeout(t *testing.T) {
	h := newMMHarness(t, duelRules, acceptanceConfig())
	h.start("t1", player("p1", 10))
	h.start("t2", player("p2", 12))
	h.step()
	if err := h.accept("t1", "p1", "ACCEPT"); err != nil {
		t.Fatal(err)
	}
	*h.now = h.now.Add(29 * time.Second)
	h.step()
	h.wantStatus(game.TicketRequiresAcceptance, "t1", "t2")
	*h.now = h.now.Add(time.Second)
	h.step()
	h.wantStatus(game.TicketSearching, "t1")
	h.wantStatus(game.TicketCancelled, "t2")
	if r := *h.ticket("t2").StatusReason; r != "ACCEPTANCE_TIMED_OUT" {
		t.Errorf("silent ticket reason %s", r)
	}
	names, _ := h.events()
	if names[len(names)-3] != evAcceptCompleted+":TimedOut" {
		t.Errorf("events %v", names)
	}
}

func TestRequestTimeoutAndStop(t *testing.T) {
	h := newMMHarness(t, duelRules, wire.CreateMatchmakingConfigurationInput{RequestTimeoutSeconds: wire.Int32(5)})
	h.start("lonely", player("p1", 10))
	h.start("far", player("p2", 100))
	h.step()
	h.wantStatus(game.TicketSearching, "lonely", "far")
	if _, err := h.s.StopMatchmaking(context.Background(), &wire.StopMatchmakingInput{TicketId: wire.String("far")}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus(game.TicketCancelled, "far")
	if _, err := h.s.StopMatchmaking(context.Background(), &wire.StopMatchmakingInput{TicketId: wire.String("far")}); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("stopping a cancelled ticket: %v", err)
	}
	if _, err := h.s.StopMatchmaking(context.Background(), &wire.StopMatchmakingInput{TicketId: wire.String("nope")}); !game.IsKind(err, game.NotFound) {
		t.Errorf("stopping an unknown ticket: %v", err)
	}
	*h.now = h.now.Add(5 * time.Second)
	h.step()
	h.wantStatus(game.TicketTimedOut, "lonely")
	defer func() {
		*h.now = h.now.Add(TicketRetention)
		h.step()
		h.wantStatus(game.TicketTimedOut, "lonely")
		*h.now = h.now.Add(time.Millisecond)
		h.step()
		out, err := h.s.DescribeMatchmaking(context.Background(), &wire.DescribeMatchmakingInput{TicketIds: []string{"lonely", "far"}})
		if err != nil || len(out.TicketList) != 0 {
			t.Errorf("tickets past retention: %+v %v", out, err)
		}
	}()
	names, details := h.events()
	last := details[len(details)-1]
	if names[len(names)-1] != evTimedOut || last["reason"] != "TimedOut" || last["message"] != "Removed from matchmaking due to timing out." {
		t.Errorf("events %v, last %v", names, last)
	}
	if d := details[len(details)-2]; d["reason"] != "Cancelled" || d["message"] != "Cancelled by request." {
		t.Errorf("cancel event %v", d)
	}
}

func TestPartiesStayTogether(t *testing.T) {
	h := newMMHarness(t, squadRules, wire.CreateMatchmakingConfigurationInput{})
	h.start("duo1", player("a1", 10), player("a2", 10))
	h.start("duo2", player("b1", 10), player("b2", 10))
	h.step()
	h.wantStatus(game.TicketCompleted, "duo1", "duo2")
	for _, id := range []string{"duo1", "duo2"} {
		tk := h.ticket(id)
		if *tk.Players[0].Team != *tk.Players[1].Team {
			t.Errorf("party %s split: %s / %s", id, *tk.Players[0].Team, *tk.Players[1].Team)
		}
	}
	if *h.ticket("duo1").Players[0].Team == *h.ticket("duo2").Players[0].Team {
		t.Errorf("both parties on one team")
	}
}

func TestNewTicketReplacesOlder(t *testing.T) {
	h := newMMHarness(t, duelRules, wire.CreateMatchmakingConfigurationInput{})
	h.start("old", player("p1", 10))
	h.start("new", player("p1", 10))
	h.wantStatus(game.TicketCancelled, "old")
	if r := *h.ticket("old").StatusReason; r != "REPLACED" {
		t.Errorf("reason %s", r)
	}
}

func TestStartMatchmakingBadInput(t *testing.T) {
	h := newMMHarness(t, duelRules, wire.CreateMatchmakingConfigurationInput{})
	ctx := context.Background()
	name := "text"
	cases := map[string]*wire.StartMatchmakingInput{
		"no players":     {ConfigurationName: wire.String("cfg")},
		"wrong type":     {ConfigurationName: wire.String("cfg"), Players: []wire.Player{{PlayerId: wire.String("p"), PlayerAttributes: map[string]wire.AttributeValue{"skill": {S: &name}}}}},
		"duplicate":      {ConfigurationName: wire.String("cfg"), Players: []wire.Player{player("p", 1), player("p", 1)}},
		"two value kind": {ConfigurationName: wire.String("cfg"), Players: []wire.Player{{PlayerId: wire.String("p"), PlayerAttributes: map[string]wire.AttributeValue{"skill": {S: &name, SL: []string{"x"}}}}}},
	}
	for what, in := range cases {
		if _, err := h.s.StartMatchmaking(ctx, in); !game.IsKind(err, game.InvalidRequest) {
			t.Errorf("%s: %v", what, err)
		}
	}
	if _, err := h.s.StartMatchmaking(ctx, &wire.StartMatchmakingInput{ConfigurationName: wire.String("nope"), Players: []wire.Player{player("p", 1)}}); !game.IsKind(err, game.NotFound) {
		t.Errorf("unknown configuration: %v", err)
	}
	h.start("dup", player("p9", 1))
	if _, err := h.s.StartMatchmaking(ctx, &wire.StartMatchmakingInput{TicketId: wire.String("dup"), ConfigurationName: wire.String("cfg"), Players: []wire.Player{player("p8", 1)}}); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("taken ticket id: %v", err)
	}
	if _, err := h.s.DeleteMatchmakingConfiguration(ctx, &wire.DeleteMatchmakingConfigurationInput{Name: wire.String("cfg")}); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("deleting a configuration with active tickets: %v", err)
	}
	if _, err := h.s.DeleteMatchmakingRuleSet(ctx, &wire.DeleteMatchmakingRuleSetInput{Name: wire.String("rules")}); !game.IsKind(err, game.InvalidRequest) {
		t.Errorf("deleting a rule set in use: %v", err)
	}
}

func TestEstimatedWait(t *testing.T) {
	h := newMMHarness(t, duelRules, wire.CreateMatchmakingConfigurationInput{})
	for i := range 3 {
		h.start(fmt.Sprint("a", i), player(fmt.Sprint("pa", i), 10))
		h.start(fmt.Sprint("b", i), player(fmt.Sprint("pb", i), 10))
	}
	h.start("early", player("early", 10))
	if w := h.ticket("early").EstimatedWaitTime; w != nil {
		t.Errorf("estimate without samples: %d", *w)
	}
	*h.now = h.now.Add(3 * time.Second)
	h.step() // six tickets complete after 3 s; "early" is left over or matched
	h.start("late", player("late", 90))
	if w := h.ticket("late").EstimatedWaitTime; w == nil || *w != 3 {
		t.Fatalf("EstimatedWaitTime = %v, want 3", w)
	}
	h.step()
	_, details := h.events()
	last := details[len(details)-1]
	if last["type"] != evSearching || last["estimatedWaitMillis"] != float64(3) {
		t.Errorf("MatchmakingSearching %v", last)
	}
}

func TestStopDuringAcceptance(t *testing.T) {
	h := newMMHarness(t, duelRules, acceptanceConfig())
	h.start("t1", player("p1", 10))
	h.start("t2", player("p2", 12))
	h.step()
	if _, err := h.s.StopMatchmaking(context.Background(), &wire.StopMatchmakingInput{TicketId: wire.String("t1")}); err != nil {
		t.Fatal(err)
	}
	h.wantStatus(game.TicketCancelled, "t1")
	h.wantStatus(game.TicketSearching, "t2")
	if r := *h.ticket("t1").StatusReason; r != "CANCELLED" {
		t.Errorf("reason %s", r)
	}
	names, _ := h.events()
	want := []string{evSearching, evSearching, evPotentialMatch, evAcceptCompleted + ":Rejected", evCancelled, evSearching}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	// A player starting over while its old ticket awaits acceptance
	// drops that proposal too.
	h.start("t3", player("p3", 11))
	h.step()
	h.wantStatus(game.TicketRequiresAcceptance, "t2", "t3")
	h.start("t2b", player("p2", 12))
	h.wantStatus(game.TicketCancelled, "t2")
	h.wantStatus(game.TicketSearching, "t3")
}
