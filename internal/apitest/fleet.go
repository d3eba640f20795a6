package apitest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// AnywhereFleet creates the custom location and an Anywhere fleet called
// name in it, and returns the fleet's id; it fails the test on error.
func AnywhereFleet(t testing.TB, gl *gamelift.Client, location, name string) string {
	t.Helper()
	if _, err := gl.CreateLocation(context.Background(), &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatal(err)
	}
	return CreateAnywhereFleet(t, gl, location, name)
}

// CreateAnywhereFleet creates an Anywhere fleet called name in an existing
// custom location and returns its id.
func CreateAnywhereFleet(t testing.TB, gl *gamelift.Client, location, name string) string {
	t.Helper()
	out, err := gl.CreateFleet(context.Background(), &gamelift.CreateFleetInput{
		Name: aws.String(name), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.FleetAttributes.FleetId)
}

// RegisterCompute registers compute name at ip in the fleet's location
// and returns a fresh auth token for it.
func RegisterCompute(t testing.TB, gl *gamelift.Client, fleet, location, name, ip string) string {
	t.Helper()
	_, err := gl.RegisterCompute(context.Background(), &gamelift.RegisterComputeInput{
		FleetId: aws.String(fleet), ComputeName: aws.String(name),
		Location: aws.String(location), IpAddress: aws.String(ip),
	})
	if err != nil {
		t.Fatal(err)
	}
	return ComputeToken(t, gl, fleet, name)
}

// ComputeToken is a fresh auth token for compute name of the fleet.
func ComputeToken(t testing.TB, gl *gamelift.Client, fleet, name string) string {
	t.Helper()
	out, err := gl.GetComputeAuthToken(context.Background(), &gamelift.GetComputeAuthTokenInput{
		FleetId: aws.String(fleet), ComputeName: aws.String(name),
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.AuthToken)
}

// ReadyProcesses counts the active server processes (of every fleet) that
// have sent a health report or host a game session, which makes them
// eligible for new sessions.
func (e *Env) ReadyProcesses(t testing.TB) int {
	t.Helper()
	ready := 0
	err := e.Server.Store().View(context.Background(), func(tx store.Tx) error {
		list, _, err := tx.ListProcesses("", game.ProcessActive, store.Page{Limit: 1000})
		for _, p := range list {
			if p.Healthy || p.GameSessionID != "" {
				ready++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ready
}
