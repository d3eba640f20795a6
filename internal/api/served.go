package api

import "sort"

// Operations returns the name of every operation the API serves (as in
// X-Amz-Target, "CreateGameSession"), sorted. It reads the operation table,
// so an operation is listed exactly when a request for it is served.
func Operations() []string {
	// Registering binds method values only; none is called, so nil
	// services are enough to read the table's keys.
	m := operations(nil, nil, nil, nil, nil, nil)
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
