package sqldb

import (
	"encoding/json"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
)

// Scaling policies: scaling_policies holds each as a JSON document under
// its fleet and name. A policy write is a write of its fleet, fenced as
// one under fleet ownership.

func (t *Tx) PutScalingPolicy(p *game.ScalingPolicy) error {
	if err := t.fence(p.FleetID); err != nil {
		return err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = t.exec(`INSERT INTO scaling_policies (fleet_id, name, status, policy_type, doc) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (fleet_id, name) DO UPDATE SET status = excluded.status, policy_type = excluded.policy_type, doc = excluded.doc`,
		p.FleetID, p.Name, p.Status, p.PolicyType, string(doc))
	return err
}

func (t *Tx) GetScalingPolicy(fleetID, name string) (*game.ScalingPolicy, error) {
	var doc string
	err := t.queryRow(`SELECT doc FROM scaling_policies WHERE fleet_id = ? AND name = ?`+t.lock(), fleetID, name).Scan(&doc)
	if errNoRows(err) {
		return nil, game.Errorf(game.NotFound, "fleet %s has no scaling policy %s", fleetID, name)
	}
	if err != nil {
		return nil, err
	}
	return decodeScalingPolicy(doc)
}

func decodeScalingPolicy(doc string) (*game.ScalingPolicy, error) {
	var p game.ScalingPolicy
	return &p, json.Unmarshal([]byte(doc), &p)
}

func (t *Tx) DeleteScalingPolicy(fleetID, name string) error {
	if err := t.fence(fleetID); err != nil {
		return err
	}
	res, err := t.exec(`DELETE FROM scaling_policies WHERE fleet_id = ? AND name = ?`, fleetID, name)
	return requireRow(res, err, "fleet %s has no scaling policy %s", fleetID, name)
}

func (t *Tx) ListScalingPolicies(fleetID, status string, p store.Page) ([]*game.ScalingPolicy, string, error) {
	var after string
	if err := decodeCursor(p.Token, &after); err != nil {
		return nil, "", err
	}
	n := limit(p.Limit, 50, 100)
	rows, err := t.query(`SELECT doc FROM scaling_policies WHERE fleet_id = ? AND name > ? AND (? = '' OR status = ?)
		ORDER BY name LIMIT ?`, fleetID, after, status, status, n+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var out []*game.ScalingPolicy
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			return nil, "", err
		}
		sp, err := decodeScalingPolicy(doc)
		if err != nil {
			return nil, "", err
		}
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(out) <= n {
		return out, "", nil
	}
	out = out[:n]
	return out, encodeCursor(out[n-1].Name), nil
}

func (t *Tx) ScaledFleets(policyType string) ([]string, error) {
	owned, ownedArgs := t.ownedOnly("fleet_id")
	args := append([]any{game.ScalingPolicyActive, policyType, policyType}, ownedArgs...)
	return t.queryStrings(`SELECT DISTINCT fleet_id FROM scaling_policies
		WHERE status = ? AND (? = '' OR policy_type = ?)`+owned+` ORDER BY fleet_id`, args...)
}
