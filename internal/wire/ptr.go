package wire

// String returns a pointer to s, or nil when s is empty: GameLift omits
// unset members rather than sending empty strings.
func String(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Int32 returns a pointer to i.
func Int32(i int) *int32 { v := int32(i); return &v }

// Int64 returns a pointer to i.
func Int64(i int64) *int64 { return &i }

// Float64 returns a pointer to f.
func Float64(f float64) *float64 { return &f }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

// Deref returns *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
