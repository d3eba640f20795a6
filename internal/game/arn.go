package game

import (
	"strings"
)

// Partition is the ARN partition Anylift writes.
const Partition = "aws"

// Account identifies the owner in resource ARNs: the home region and the
// account id written into them.
type Account struct {
	Region string // e.g. us-west-2
	ID     string // 12 digits
}

// OrDefaults is a with what it leaves empty filled in: the region
// us-west-2, the account 000000000000.
func (a Account) OrDefaults() Account {
	if a.Region == "" {
		a.Region = "us-west-2"
	}
	if a.ID == "" {
		a.ID = "000000000000"
	}
	return a
}

func (a Account) arn(resource string) string {
	return "arn:" + Partition + ":gamelift:" + a.Region + ":" + a.ID + ":" + resource
}

func (a Account) FleetARN(fleetID string) string       { return a.arn("fleet/" + fleetID) }
func (a Account) AliasARN(aliasID string) string       { return a.arn("alias/" + aliasID) }
func (a Account) LocationARN(name string) string       { return a.arn("location/" + name) }
func (a Account) QueueARN(name string) string          { return a.arn("gamesessionqueue/" + name) }
func (a Account) ComputeARN(computeName string) string { return a.arn("compute/" + computeName) }

// GameSessionARN is a game session's id, an ARN. The account
// field is empty, as GameLift writes it; a session in a location other than
// the home region carries the location as an extra path segment.
func (a Account) GameSessionARN(fleetID, location, idString string) string {
	path := fleetID + "/"
	if location != "" && location != a.Region {
		path += location + "/"
	}
	return "arn:" + Partition + ":gamelift:" + a.Region + "::gamesession/" + path + idString
}

// ResourceID returns the id part of an identifier that may be given as an
// id or as an ARN of the given resource type ("fleet", "alias", "location",
// "gamesessionqueue", "compute"): for an ARN, what follows "<type>/".
func ResourceID(idOrARN, resourceType string) string {
	if !strings.HasPrefix(idOrARN, "arn:") {
		return idOrARN
	}
	i := strings.Index(idOrARN, ":"+resourceType+"/")
	if i < 0 {
		return idOrARN
	}
	return idOrARN[i+len(resourceType)+2:]
}

// ParseGameSessionARN splits a game session ARN into its fleet id and id
// string. ok is false when s is not a game session ARN.
func ParseGameSessionARN(s string) (fleetID, idString string, ok bool) {
	i := strings.Index(s, ":gamesession/")
	if !strings.HasPrefix(s, "arn:") || i < 0 {
		return "", "", false
	}
	parts := strings.Split(s[i+len(":gamesession/"):], "/")
	if len(parts) < 2 || parts[0] == "" || parts[len(parts)-1] == "" {
		return "", "", false
	}
	return parts[0], parts[len(parts)-1], true
}
