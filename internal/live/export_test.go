package live

// ForcePlan makes every search take one plan, "walk" (in the sort's
// order wherever an index has it) or "heap" (every candidate of the
// smallest source, a range's included), or choose ("").
func ForcePlan(p string) {
	forcePlan.Store(map[string]int32{"walk": planWalk, "heap": planHeap}[p])
}
