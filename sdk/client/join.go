package client

import (
	"context"
	"errors"
)

// JoinSession reserves a seat in the game session (unless r.Seat already
// holds one), then calls the Connect hook with it. It succeeds only if
// both do; when the hook fails the seat is freed and the error is
// ConnectFailed. One client is in at most one session at a time.
func (c *Client) JoinSession(ctx context.Context, r JoinSessionRequest) (Seat, error) {
	c.mu.Lock()
	busy := c.joined != nil
	c.mu.Unlock()
	if busy {
		return Seat{}, errorf(CodeAlreadyJoined, "this client is already in a game session; leave it first")
	}
	var seat Seat
	if r.Seat != nil && r.GameSessionID == "" {
		r.GameSessionID = r.Seat.GameSessionID
	}
	if r.Seat != nil && r.Seat.PlayerSessionID != "" {
		seat = *r.Seat
	} else {
		if r.GameSessionID == "" {
			return Seat{}, errorf(CodeInvalidParameter, "GameSessionID is required")
		}
		var err error
		if seat, err = c.t.reserve(ctx, r); err != nil {
			return Seat{}, err
		}
	}
	return c.connect(ctx, seat)
}

// connect runs the Connect hook and records the joined seat.
func (c *Client) connect(ctx context.Context, seat Seat) (Seat, error) {
	if c.hooks.Connect != nil {
		if err := c.hooks.Connect(ctx, seat); err != nil {
			if rerr := c.t.release(context.WithoutCancel(ctx), seat); rerr != nil {
				err = errors.Join(err, rerr)
			}
			return Seat{}, &Error{Code: CodeConnectFailed, Message: "connecting to the game server failed: " + err.Error(),
				GameSessionID: seat.GameSessionID, Err: err}
		}
	}
	c.mu.Lock()
	c.joined = &seat
	c.mu.Unlock()
	return seat, nil
}

// JoinSessionAsync is JoinSession with the result sent to
// Notifications.OnJoinSession.
func (c *Client) JoinSessionAsync(r JoinSessionRequest) {
	run(c, c.notify.OnJoinSession, func(ctx context.Context) (Seat, error) { return c.JoinSession(ctx, r) })
}

// RejoinSession gets the player a seat again in a game session they
// dropped out of, within the gateway's grace period, and connects as
// JoinSession does. Gateway transport only.
func (c *Client) RejoinSession(ctx context.Context, gameSessionID string) (Seat, error) {
	seat, err := c.t.rejoin(ctx, gameSessionID)
	if err != nil {
		return Seat{}, err
	}
	return c.connect(ctx, seat)
}

// Joined is the seat of the session this client is in, if any.
func (c *Client) Joined() (Seat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.joined == nil {
		return Seat{}, false
	}
	return *c.joined, true
}

// LeaveSession calls the Disconnect hook and frees the seat of the
// session this client joined; NotJoined when there is none. The seat is
// freed even when the hook fails (the hook's error is reported).
//
// Over the control plane, GameLift's API has no call that ends a player
// session: the game server frees the seat when it sees the player go
// (RemovePlayerSession), or the reservation times out.
func (c *Client) LeaveSession(ctx context.Context) error {
	c.mu.Lock()
	seat := c.joined
	c.joined = nil
	c.mu.Unlock()
	if seat == nil {
		return errorf(CodeNotJoined, "this client is not in a game session")
	}
	var hookErr error
	if c.hooks.Disconnect != nil {
		hookErr = c.hooks.Disconnect(ctx, *seat)
	}
	if err := c.t.release(ctx, *seat); err != nil {
		return err
	}
	if hookErr != nil {
		return &Error{Code: CodeConnectFailed, Message: "disconnecting from the game server failed: " + hookErr.Error(),
			GameSessionID: seat.GameSessionID, Err: hookErr}
	}
	return nil
}

// LeaveSessionAsync is LeaveSession with the result sent to
// Notifications.OnLeaveSession.
func (c *Client) LeaveSessionAsync() {
	var h func(struct{}, error)
	if c.notify.OnLeaveSession != nil {
		h = func(_ struct{}, err error) { c.notify.OnLeaveSession(err) }
	}
	run(c, h, func(ctx context.Context) (struct{}, error) { return struct{}{}, c.LeaveSession(ctx) })
}
