package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// The outputs with encoded lists must be written exactly as the outputs
// they stand for: the same bytes, in both protocols, through Encode's
// appending and through the codecs' own encoders.

// oddStrings are values the codecs treat specially: empty, escaped in
// JSON, non-ASCII, invalid UTF-8, long enough for a wider CBOR head.
var oddStrings = []string{
	"", "a", "Matt's <game> & \"friends\"", "tab\there\nline", "\u2028\u2029", "héllo wörld ✓", "\xff\xfe",
	string(bytes.Repeat([]byte("x"), 23)), string(bytes.Repeat([]byte("y"), 24)), string(bytes.Repeat([]byte("z"), 300)),
	"arn:aws:gamelift:us-west-2::gamesession/fleet-1/custom-a/gsess-1",
}

func pick[T any](r *rand.Rand, list ...T) T { return list[r.IntN(len(list))] }

func maybeString(r *rand.Rand) *string {
	if r.IntN(4) == 0 {
		return nil
	}
	return ptr(pick(r, oddStrings...))
}

// randomSession returns a session shape as control fills it, with odd
// values and members left out at random.
func randomSession(r *rand.Rand) GameSession {
	at := time.UnixMilli(1767225600000 + r.Int64N(1e9)).UTC()
	s := GameSession{
		GameSessionId: maybeString(r), Name: maybeString(r), FleetId: maybeString(r), FleetArn: maybeString(r),
		CreationTime: NewTime(at), CurrentPlayerSessionCount: ptr(int32(r.IntN(300))), MaximumPlayerSessionCount: ptr(int32(r.IntN(300))),
		Status: maybeString(r), StatusReason: maybeString(r), IpAddress: maybeString(r), DnsName: maybeString(r),
		PlayerSessionCreationPolicy: maybeString(r), CreatorId: maybeString(r), GameSessionData: maybeString(r),
		MatchmakerData: maybeString(r), Location: maybeString(r), ComputeName: maybeString(r),
	}
	if r.IntN(2) == 0 {
		s.TerminationTime = NewTime(at.Add(time.Duration(r.IntN(1e6)) * time.Millisecond))
	}
	if r.IntN(2) == 0 {
		s.Port = ptr(int32(r.IntN(65536)))
	}
	switch r.IntN(3) {
	case 0:
		s.GameProperties = []GameProperty{}
	case 1:
		for range 1 + r.IntN(16) {
			s.GameProperties = append(s.GameProperties, GameProperty{Key: maybeString(r), Value: maybeString(r)})
		}
	}
	return s
}

// checkEncodedPage encodes a page of sessions both ways, in both
// protocols, and fails unless every encoding is the same.
func checkEncodedPage(t *testing.T, sessions []GameSession, next *string) {
	t.Helper()
	for _, p := range []Protocol{JSON, CBOR} {
		var list EncodedList[GameSession]
		if sessions != nil {
			list = EncodedList[GameSession]{}
		}
		for i := range sessions {
			e, err := EncodeValue(p, &sessions[i])
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, e)
		}
		want, err := Encode(p, &SearchGameSessionsOutput{GameSessions: sessions, NextToken: next})
		if err != nil {
			t.Fatal(err)
		}
		wantD, err := Encode(p, &DescribeGameSessionsOutput{GameSessions: sessions, NextToken: next})
		if err != nil {
			t.Fatal(err)
		}
		for name, out := range map[string]any{
			"search":   &SearchGameSessionsEncoded{GameSessions: list, NextToken: next},
			"describe": &DescribeGameSessionsEncoded{GameSessions: list, NextToken: next},
		} {
			got, err := Encode(p, out)
			if err != nil {
				t.Fatalf("%v %s: %v", p, name, err)
			}
			if !bytes.Equal(got, want) || !bytes.Equal(got, wantD) {
				t.Fatalf("%v %s: appended\n%s\nencoded\n%s", p, name, show(p, got), show(p, want))
			}
			// Through the codecs themselves (MarshalJSON, MarshalCBOR):
			// the list as a member of a structure of theirs.
			wantIn, err := Encode(p, &struct{ V *SearchGameSessionsOutput }{&SearchGameSessionsOutput{GameSessions: sessions, NextToken: next}})
			if err != nil {
				t.Fatal(err)
			}
			viaCodec, err := Encode(p, &struct{ V any }{out})
			if err != nil {
				t.Fatalf("%v %s through the codec: %v", p, name, err)
			}
			if !bytes.Equal(viaCodec, wantIn) {
				t.Fatalf("%v %s through the codec:\n%s\nwant\n%s", p, name, show(p, viaCodec), show(p, wantIn))
			}
		}
	}
}

func show(p Protocol, b []byte) string {
	if p == CBOR {
		return hex.EncodeToString(b)
	}
	return string(b)
}

func TestEncodedPagesAreTheEncodedOutputs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	checkEncodedPage(t, nil, nil)
	checkEncodedPage(t, []GameSession{}, nil)
	checkEncodedPage(t, []GameSession{}, ptr(""))
	for range 300 {
		n := pick(r, 0, 1, 2, 20, 23, 24, 30)
		sessions := make([]GameSession, n)
		for i := range sessions {
			sessions[i] = randomSession(r)
		}
		checkEncodedPage(t, sessions, maybeString(r))
	}
}

func TestEncodedItemsMustBeInTheAnswersProtocol(t *testing.T) {
	e, err := EncodeValue(CBOR, &GameSession{Name: ptr("a")})
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []any{
		&SearchGameSessionsEncoded{GameSessions: EncodedList[GameSession]{e}},
		&DescribeGameSessionsEncoded{GameSessions: EncodedList[GameSession]{{}}},
	} {
		if _, err := Encode(JSON, out); err == nil {
			t.Errorf("%T with an item not in JSON was encoded", out)
		}
	}
	if _, err := json.Marshal(EncodedList[GameSession]{e}); err == nil {
		t.Error("a list of CBOR items was written as JSON")
	}
}

// FuzzEncodedPage holds the appended page to the encoded output for any
// strings in the members the sessions and the token carry.
func FuzzEncodedPage(f *testing.F) {
	f.Add("gsess-1", "game", "mode", "ffa", "eyJDIjoxfQ", uint8(2), int64(1767225600123))
	f.Add("", "<&>", "", "\u2028", "", uint8(0), int64(0))
	f.Add("\xff", "é", "k\"", "v\\", "tok\x00", uint8(25), int64(-1))
	f.Fuzz(func(t *testing.T, id, name, key, value, token string, n uint8, ms int64) {
		at := time.UnixMilli(ms % 253402300799000).UTC()
		s := GameSession{GameSessionId: String(id), Name: String(name), CreationTime: NewTime(at),
			CurrentPlayerSessionCount: ptr(int32(ms)), MaximumPlayerSessionCount: ptr(int32(n)),
			GameProperties: []GameProperty{{Key: &key, Value: &value}}, GameSessionData: &name}
		if n%3 == 0 {
			s.GameProperties = []GameProperty{}
		}
		sessions := make([]GameSession, int(n)%30)
		for i := range sessions {
			sessions[i] = s
		}
		next := &token
		if n%2 == 0 {
			next = String(token)
		}
		checkEncodedPage(t, sessions, next)
	})
}
