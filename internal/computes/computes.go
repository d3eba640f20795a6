package computes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// authTokenBytes is the entropy of a compute auth token: 32 random bytes,
// 43 characters of [A-Za-z0-9-], within GameLift's AuthToken (1..64).
const authTokenBytes = 32

// RegisterCompute registers a compute to an Anywhere fleet (semantics.md
// §7.3). The compute is ACTIVE at once.
//
// Errors: NotFound for an unknown fleet; InvalidRequest when the fleet is
// not an ACTIVE Anywhere fleet, or Location or IpAddress is missing, or
// Location is not one of the fleet's locations; Conflict when the fleet
// already has a compute of that name with other details.
//
// Re-registration: GameLift documents only that a name is unique within a
// fleet. An agent that restarts registers its compute again with the same
// details, so a registration identical to the stored one (location, IP
// address, DNS name, certificate path) returns the existing compute
// unchanged; any difference is a Conflict.
func (s *Service) RegisterCompute(ctx context.Context, in *wire.RegisterComputeInput) (*wire.RegisterComputeOutput, error) {
	fleetID := game.ResourceID(*in.FleetId, "fleet")
	want := &game.Compute{
		FleetID:         fleetID,
		Name:            *in.ComputeName,
		ARN:             s.cfg.Account.ComputeARN(*in.ComputeName),
		Location:        wire.Deref(in.Location),
		IPAddress:       wire.Deref(in.IpAddress),
		DNSName:         wire.Deref(in.DnsName),
		CertificatePath: wire.Deref(in.CertificatePath),
		Status:          game.ComputeActive,
		CreationTime:    s.clock(),
	}
	var got *game.Compute
	err := s.update(ctx, func(tx store.Tx) error {
		f, err := tx.GetFleet(fleetID)
		if err != nil {
			return err
		}
		if err := checkRegistration(f, want); err != nil {
			return err
		}
		old, err := tx.GetCompute(fleetID, want.Name)
		switch {
		case err == nil && sameRegistration(old, want):
			got = old
			return nil
		case err == nil:
			return game.Errorf(game.Conflict, "compute %s is already registered to fleet %s with other details", want.Name, fleetID)
		case !game.IsKind(err, game.NotFound):
			return err
		}
		got = want
		return tx.InsertCompute(want)
	})
	if err != nil {
		return nil, err
	}
	return &wire.RegisterComputeOutput{Compute: s.computeOut(got)}, nil
}

// checkRegistration applies the rules the model cannot express.
func checkRegistration(f *game.Fleet, c *game.Compute) error {
	switch {
	case f.ComputeType != "" && f.ComputeType != wire.ComputeTypeAnywhere:
		return game.Errorf(game.InvalidRequest, "fleet %s is not an ANYWHERE fleet; computes can be registered only to ANYWHERE fleets", f.ID)
	case f.Status != game.FleetActive:
		return game.Errorf(game.InvalidRequest, "fleet %s is %s; computes can be registered only to an ACTIVE fleet", f.ID, f.Status)
	case c.Location == "":
		return game.Errorf(game.InvalidRequest, "Location is required to register a compute to an ANYWHERE fleet")
	case !slices.Contains(f.Locations, c.Location):
		return game.Errorf(game.InvalidRequest, "Location %s is not a location of fleet %s", c.Location, f.ID)
	case c.IPAddress == "":
		return game.Errorf(game.InvalidRequest, "IpAddress is required to register a compute to an ANYWHERE fleet")
	}
	return nil
}

func sameRegistration(a, b *game.Compute) bool {
	return a.Location == b.Location && a.IPAddress == b.IPAddress &&
		a.DNSName == b.DNSName && a.CertificatePath == b.CertificatePath
}

// DeregisterCompute removes a compute and its auth tokens and ends the
// game sessions it hosts (Control.EndComputeSessions). ComputeName may be a
// name or a compute ARN. NotFound when the fleet or compute is absent.
func (s *Service) DeregisterCompute(ctx context.Context, in *wire.DeregisterComputeInput) (*wire.DeregisterComputeOutput, error) {
	fleetID := game.ResourceID(*in.FleetId, "fleet")
	name := game.ResourceID(*in.ComputeName, "compute")
	err := s.update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetFleet(fleetID); err != nil {
			return err
		}
		return s.Deregister(tx, fleetID, name)
	})
	if err != nil {
		return nil, err
	}
	return &wire.DeregisterComputeOutput{}, nil
}

// Deregister ends the compute's sessions, then deletes it with its
// tokens, inside tx. NotFound when the compute is not there.
func (s *Service) Deregister(tx store.Tx, fleetID, name string) error {
	if _, err := tx.GetCompute(fleetID, name); err != nil {
		return err
	}
	if err := s.ctl.EndComputeSessions(tx, fleetID, name); err != nil {
		return err
	}
	return tx.DeleteCompute(fleetID, name)
}

// DeleteFleetComputes deregisters every compute of a fleet being
// deleted, in the caller's transaction; their auth tokens go with them.
func (s *Service) DeleteFleetComputes(tx store.Tx, fleetID string) error {
	for {
		list, _, err := tx.ListComputes(fleetID, store.ComputeFilter{}, store.Page{Limit: 100})
		if err != nil || len(list) == 0 {
			return err
		}
		for _, c := range list {
			if err := s.Deregister(tx, fleetID, c.Name); err != nil {
				return err
			}
		}
	}
}

// DescribeCompute returns one compute. ComputeName may be a name or a
// compute ARN. NotFound when the fleet or compute is absent.
func (s *Service) DescribeCompute(ctx context.Context, in *wire.DescribeComputeInput) (*wire.DescribeComputeOutput, error) {
	fleetID := game.ResourceID(*in.FleetId, "fleet")
	name := game.ResourceID(*in.ComputeName, "compute")
	var c *game.Compute
	err := s.view(ctx, func(tx store.Tx) error {
		if _, err := tx.GetFleet(fleetID); err != nil {
			return err
		}
		var err error
		c, err = tx.GetCompute(fleetID, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &wire.DescribeComputeOutput{Compute: s.computeOut(c)}, nil
}

// ListCompute lists a fleet's computes by name, optionally in one location
// and with one status. The status filter takes the model's spelling
// (ACTIVE, IMPAIRED) or, in any case, the spelling the answers use
// ("Active"); the API layer has folded it to the model's by then
// (wire.ListComputeInput.Normalize). An unknown fleet is NotFound (semantics.md §10.3),
// although the model lists NotFoundException for neither ListCompute nor
// RegisterCompute: the AWS SDKs then raise a generic API error with that
// code. ContainerGroupDefinitionName applies only to container fleets and
// is refused.
func (s *Service) ListCompute(ctx context.Context, in *wire.ListComputeInput) (*wire.ListComputeOutput, error) {
	if in.ContainerGroupDefinitionName != nil {
		return nil, game.Errorf(game.InvalidRequest, "ContainerGroupDefinitionName applies only to container fleets")
	}
	fleetID := game.ResourceID(*in.FleetId, "fleet")
	out := &wire.ListComputeOutput{ComputeList: []wire.Compute{}}
	err := s.view(ctx, func(tx store.Tx) error {
		if _, err := tx.GetFleet(fleetID); err != nil {
			return err
		}
		filter := store.ComputeFilter{Location: wire.Deref(in.Location), Status: wire.Deref(in.ComputeStatus)}
		page := store.Page{Limit: int(wire.Deref(in.Limit)), Token: wire.Deref(in.NextToken)}
		list, next, err := tx.ListComputes(fleetID, filter, page)
		for _, c := range list {
			out.ComputeList = append(out.ComputeList, *s.computeOut(c))
		}
		out.NextToken = wire.String(next)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) computeOut(c *game.Compute) *wire.Compute {
	return &wire.Compute{
		FleetId:                    wire.String(c.FleetID),
		FleetArn:                   wire.String(s.cfg.Account.FleetARN(c.FleetID)),
		ComputeName:                wire.String(c.Name),
		ComputeArn:                 wire.String(c.ARN),
		IpAddress:                  wire.String(c.IPAddress),
		DnsName:                    wire.String(c.DNSName),
		ComputeStatus:              wire.String(computeStatusOut(c.Status)),
		Location:                   wire.String(c.Location),
		CreationTime:               wire.NewTime(c.CreationTime),
		GameLiftServiceSdkEndpoint: wire.String(s.cfg.SDKEndpoint),
		GameLiftAgentEndpoint:      wire.String(s.cfg.AgentEndpoint),
	}
}

// computeStatusOut spells a compute status as GameLift answers it for an
// Anywhere compute: "Active", although the API model's enum (and the
// ListCompute filter) spell it ACTIVE (docs/decisions.md, Computes). Only
// ACTIVE computes exist here; any other status is answered as stored.
func computeStatusOut(status string) string {
	if status == game.ComputeActive {
		return "Active"
	}
	return status
}

// GetComputeAuthToken mints a new auth token for a registered compute,
// valid for cfg.AuthTokenTTL. Only the token's SHA-256 is stored; earlier
// tokens stay valid until they expire. NotFound when the fleet or compute
// is absent. The token is never logged.
func (s *Service) GetComputeAuthToken(ctx context.Context, in *wire.GetComputeAuthTokenInput) (*wire.GetComputeAuthTokenOutput, error) {
	tok, c, err := s.mintToken(ctx, game.ResourceID(*in.FleetId, "fleet"), game.ResourceID(*in.ComputeName, "compute"))
	if err != nil {
		return nil, err
	}
	return &wire.GetComputeAuthTokenOutput{
		FleetId:             wire.String(tok.FleetID),
		FleetArn:            wire.String(s.cfg.Account.FleetARN(tok.FleetID)),
		ComputeName:         wire.String(c.Name),
		ComputeArn:          wire.String(c.ARN),
		AuthToken:           wire.String(tok.Secret),
		ExpirationTimestamp: wire.NewTime(tok.Expires),
	}, nil
}

// MintAuthToken mints a token for a registered compute (the agent and
// RefreshConnection use it); the result carries the secret.
func (s *Service) MintAuthToken(ctx context.Context, fleetID, computeName string) (*game.AuthToken, error) {
	tok, _, err := s.mintToken(ctx, fleetID, computeName)
	return tok, err
}

func (s *Service) mintToken(ctx context.Context, fleetID, name string) (*game.AuthToken, *game.Compute, error) {
	now := s.clock()
	secret := game.NewSecret(authTokenBytes)
	tok := &game.AuthToken{
		Hash: hashToken(secret), Secret: secret, FleetID: fleetID, ComputeName: name,
		Created: now, Expires: now.Add(s.cfg.AuthTokenTTL),
	}
	var c *game.Compute
	err := s.update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetFleet(fleetID); err != nil {
			return err
		}
		var err error
		if c, err = tx.GetCompute(fleetID, name); err != nil {
			return err
		}
		stored := *tok
		stored.Secret = ""
		return tx.InsertAuthToken(&stored)
	})
	return tok, c, err
}

// AuthTokenExpiry checks a token as CheckAuthToken does and returns when
// it expires.
func (s *Service) AuthTokenExpiry(ctx context.Context, token, fleetID, computeName string) (time.Time, error) {
	if err := s.CheckAuthToken(ctx, token, fleetID, computeName); err != nil {
		return time.Time{}, err
	}
	var exp time.Time
	err := s.view(ctx, func(tx store.Tx) error {
		t, err := tx.GetAuthToken(hashToken(token))
		if err == nil {
			exp = t.Expires
		}
		return err
	})
	return exp, err
}

// hashToken is how a token is stored and looked up: lowercase hex SHA-256.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// CheckAuthToken answers nil when token is an unexpired auth token minted
// for this fleet (id or ARN) and compute (name or ARN), and Unauthorized
// otherwise. The token is looked up by its hash, so neither the token nor
// a comparison of it with stored secrets ever happens in the clear.
func (s *Service) CheckAuthToken(ctx context.Context, token, fleetID, computeName string) error {
	refused := game.Errorf(game.Unauthorized, "the auth token is not valid for this fleet and compute")
	if token == "" {
		return refused
	}
	now := s.clock()
	return s.view(ctx, func(tx store.Tx) error {
		t, err := tx.GetAuthToken(hashToken(token))
		switch {
		case game.IsKind(err, game.NotFound):
			return refused
		case err != nil:
			return err
		case t.FleetID != game.ResourceID(fleetID, "fleet"),
			t.ComputeName != game.ResourceID(computeName, "compute"):
			return refused
		case !now.Before(t.Expires) && !s.cfg.AcceptExpiredTokens:
			return game.Errorf(game.Unauthorized, "the auth token expired at %s", t.Expires.UTC().Format(time.RFC3339))
		}
		return nil
	})
}

// SweepAuthTokens deletes the auth tokens that have expired; control's
// timers run it.
func (s *Service) SweepAuthTokens(ctx context.Context) error {
	if s.cfg.AcceptExpiredTokens {
		return nil
	}
	return s.update(ctx, func(tx store.Tx) error {
		_, err := tx.DeleteExpiredAuthTokens(s.clock())
		return err
	})
}

// NewToken mints a compute auth token without storing it: the secret
// handed to the game server, and the hash it is stored and looked up by.
func (s *Service) NewToken() (secret, hash string) {
	secret = game.NewSecret(authTokenBytes)
	return secret, hashToken(secret)
}
