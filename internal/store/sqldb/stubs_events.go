package sqldb

import "errors"

// errTODO is what the placeholder methods of areas not yet built answer
// (stubs_*.go). The events themselves live in events.go.
var errTODO = errors.New("not implemented yet")
