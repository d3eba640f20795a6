package ownedtest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Epoch is the creation time of what the helpers make.
var Epoch = time.UnixMilli(1767225600000).UTC()

var acct = game.Account{Region: "us-west-2", ID: "123456789012"}

// Session returns a game session of fleetID in location, on compute c1.
func Session(fleetID, location, idString, status string, max int) *game.GameSession {
	return &game.GameSession{ID: acct.GameSessionARN(fleetID, location, idString), IDString: idString, Name: idString,
		FleetID: fleetID, FleetARN: acct.FleetARN(fleetID), Location: location, ComputeName: "c1", CreationTime: Epoch,
		MaximumPlayerSessionCount: max, Status: status, PlayerSessionCreationPolicy: game.AcceptAll,
		ProtectionPolicy: game.NoProtection, IPAddress: "10.0.0.1", Port: 7000}
}

// Players returns n reservations.
func Players(n int) []*game.PlayerSession {
	var out []*game.PlayerSession
	for range n {
		out = append(out, &game.PlayerSession{ID: game.NewPlayerSessionID(), PlayerID: "p", CreationTime: Epoch, Status: game.PlayerReserved})
	}
	return out
}

// Process returns a connected, healthy process of fleetID in location, on
// compute c1.
func Process(fleetID, location, pid, status string) *game.Process {
	return &game.Process{FleetID: fleetID, ComputeName: "c1", PID: pid, Location: location, Status: status,
		Healthy: true, Connected: true, CreationTime: Epoch}
}

// Write makes one random write of fleetID's game sessions and processes
// in location in tx: a session or process added, seats taken, a session
// renamed or activated or ended, a process ending, changing health or
// claimed. newID numbers what it adds.
func Write(tx store.Tx, r *rand.Rand, fleetID, location string, newID func() int) error {
	live, err := tx.LiveGameSessions(fleetID, "")
	if err != nil {
		return err
	}
	procs, _, err := tx.ListProcesses(fleetID, "", store.Page{Limit: 1000})
	if err != nil {
		return err
	}
	switch k := r.IntN(8); {
	case k < 2 || len(live) == 0:
		status := []string{game.SessionActive, game.SessionActive, game.SessionActivating}[r.IntN(3)]
		s := Session(fleetID, location, fmt.Sprintf("gs-%05d", newID()), status, 1+r.IntN(4))
		s.CreationTime = Epoch.Add(time.Duration(r.IntN(50)) * time.Millisecond)
		s.Properties = []game.Property{{Key: "mode", Value: []string{"ffa", "ctf"}[r.IntN(2)]}}
		return tx.InsertGameSession(s)
	case k < 4:
		err := tx.ReserveSeats(live[r.IntN(len(live))].ID, Players(1), Epoch)
		if game.IsKind(err, game.GameSessionFull) || game.IsKind(err, game.InvalidGameSessionStatus) {
			return nil
		}
		return err
	case k == 4:
		s := live[r.IntN(len(live))]
		s.Name = fmt.Sprintf("renamed-%d", r.IntN(100))
		if s.Status == game.SessionActivating {
			s.Status = game.SessionActive
		}
		return tx.UpdateGameSession(s)
	case k == 5:
		s := live[r.IntN(len(live))]
		if err := tx.EndPlayerSessions(s.ID, Epoch.Add(time.Minute)); err != nil {
			return err
		}
		s.Status, s.TerminationTime, s.CurrentPlayerSessionCount = game.SessionTerminated, Epoch.Add(time.Minute), 0
		return tx.UpdateGameSession(s)
	case k == 6 || len(procs) == 0:
		return tx.PutProcess(Process(fleetID, location, fmt.Sprintf("pid-%05d", newID()), game.ProcessActive))
	}
	p := procs[r.IntN(len(procs))]
	switch r.IntN(3) {
	case 0:
		p.Status, p.TerminationTime = game.ProcessTerminated, Epoch.Add(time.Minute)
	case 1:
		p.Healthy = !p.Healthy
	default:
		_, err := tx.ClaimFreeProcess(fleetID, location, live[r.IntN(len(live))].ID, 0)
		if game.IsKind(err, game.NotFound) {
			return nil
		}
		return err
	}
	return tx.PutProcess(p)
}
