package main

// patternOverrides replaces the model's pattern of a few string shapes
// where Anylift deliberately accepts more than GameLift. Each entry says
// why; docs/decisions.md records the decision. Everything else is the
// model as published.
var patternOverrides = map[string]string{
	// A queue's NotificationTarget is an SNS topic ARN in GameLift; Anylift
	// also delivers events to webhooks, so an http(s) URL is accepted too.
	// The SNS alternative is the model's own pattern, unchanged.
	"QueueSnsArnStringModel": `[a-zA-Z0-9:_-]*(\.fifo)?|https?://[^\s]+`,
	// A matchmaking configuration's NotificationTarget likewise: the SNS
	// pattern as published, or an http(s) webhook URL.
	"SnsArnStringModel": `[a-zA-Z0-9:_/-]*(.fifo)?|https?://[^\s]+`,
}

// applyOverrides rewrites the patterns of m's shapes named in
// patternOverrides.
func applyOverrides(m *model) {
	for name, pattern := range patternOverrides {
		s, ok := m.Shapes[name]
		if !ok {
			panic("pattern override for unknown shape " + name)
		}
		s.Pattern = pattern
		m.Shapes[name] = s
	}
}
