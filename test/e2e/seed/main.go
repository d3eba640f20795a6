// Command seed writes ACTIVE game sessions into a stopped Anylift's SQLite
// data directory, for the end-to-end script: game sessions cannot be
// created through the API until server processes exist. It prints each
// session's ARN on its own line.
//
//	seed -data-dir DIR -fleet-id fleet-... -location custom-x -count 6
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/store/sqlite"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("data-dir", "", "the stopped server's data directory")
	fleetID := flag.String("fleet-id", "", "fleet to seed")
	location := flag.String("location", "", "the sessions' location")
	region := flag.String("region", "us-west-2", "home region (ARNs)")
	count := flag.Int("count", 6, "number of sessions")
	flag.Parse()
	if *dir == "" || *fleetID == "" || *location == "" {
		return fmt.Errorf("-data-dir, -fleet-id and -location are required")
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, *dir, sqlite.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	acct := game.Account{Region: *region}
	base := time.Now().UTC().Truncate(time.Millisecond)
	var ids []string
	err = st.Update(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(*fleetID)
		if err != nil {
			return err
		}
		for i := range *count {
			s := session(acct, f, *location, i, base.Add(time.Duration(i)*time.Second))
			if err := tx.InsertGameSession(s); err != nil {
				return err
			}
			ids = append(ids, s.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		fmt.Println(id)
	}
	return nil
}

// session i: mode alternates ctf/dm, level is i, seats are 2 for the first
// and 8 for the others, names are e2e-<i>.
func session(acct game.Account, f *game.Fleet, location string, i int, at time.Time) *game.GameSession {
	idString := "gsess-e2e-" + strconv.Itoa(i)
	mode := "ctf"
	if i%2 == 1 {
		mode = "dm"
	}
	seats := 8
	if i == 0 {
		seats = 2
	}
	return &game.GameSession{
		ID:                          acct.GameSessionARN(f.ID, location, idString),
		IDString:                    idString,
		Name:                        "e2e-" + strconv.Itoa(i),
		FleetID:                     f.ID,
		FleetARN:                    f.ARN,
		Location:                    location,
		ComputeName:                 "e2e-compute",
		ProcessID:                   "process-e2e-" + strconv.Itoa(i),
		CreationTime:                at,
		MaximumPlayerSessionCount:   seats,
		Status:                      game.SessionActive,
		Properties:                  []game.Property{{Key: "mode", Value: mode}, {Key: "level", Value: strconv.Itoa(i)}},
		IPAddress:                   "127.0.0.1",
		Port:                        7000 + i,
		PlayerSessionCreationPolicy: game.AcceptAll,
		ProtectionPolicy:            game.NoProtection,
	}
}
