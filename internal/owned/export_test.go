package owned

// AfterSnapshot makes each load of m run f once it has read its snapshot,
// before it waits for the transactions begun before.
func AfterSnapshot(m *Memory, f func()) { m.afterSnapshot = f }
