package cli

import (
	"slices"

	"github.com/anylift/anylift/internal/api"
)

// command is one operation as the CLI offers it.
type command struct {
	Name   string     // aws CLI name: create-game-session
	Op     string     // operation name: CreateGameSession
	Input  func() any // new input shape (a pointer to a wire struct)
	Output func() any // new output shape
	Params []param    // the input's members, in model order
	Pages  string     // for a paginated operation, the member listing results
}

// param is one member of an operation's input, offered as a flag.
type param struct {
	Flag     string   // without dashes: maximum-player-session-count
	Member   string   // MaximumPlayerSessionCount
	Type     string   // the model's type: string, integer, boolean, list, structure, ...
	Required bool     // the model requires it
	Enum     []string // the allowed values, when the model lists them
	Doc      string
}

// served returns the commands of the operations the API serves, by aws CLI
// name. Operations of the model the API does not serve are not offered.
func served() map[string]*command {
	out := map[string]*command{}
	for _, op := range api.Operations() {
		if c, ok := commands[op]; ok {
			out[c.Name] = c
		}
	}
	return out
}

// servedNames returns the served commands' names, sorted.
func servedNames() []string {
	var names []string
	for n := range served() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
