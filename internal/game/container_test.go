package game

import (
	"strings"
	"testing"
)

func TestContainerGroupRef(t *testing.T) {
	a := Account{Region: "us-west-2", ID: "123456789012"}
	for _, tc := range []struct {
		ref     string
		name    string
		version int
		ok      bool
	}{
		{"arena", "arena", 0, true},
		{a.ContainerGroupDefinitionARN("arena", 0), "arena", 0, true},
		{a.ContainerGroupDefinitionARN("arena", 12), "arena", 12, true},
		{"arn:aws:gamelift:eu-west-1:1:containergroupdefinition/arena:3", "arena", 3, true},
		{"arena:2", "arena", 2, true},
		{"arn:aws:gamelift:us-west-2:1:containergroupdefinition/arena:0", "arena", 0, false},
		{"arn:aws:gamelift:us-west-2:1:containergroupdefinition/arena:x", "arena", 0, false},
		{"arn:aws:gamelift:us-west-2:1:fleet/fleet-1", "arn:aws:gamelift:us-west-2:1:fleet/fleet-1", 0, false},
	} {
		name, v, ok := ContainerGroupRef(tc.ref)
		if name != tc.name || v != tc.version || ok != tc.ok {
			t.Errorf("ContainerGroupRef(%q) = %q %d %v, want %q %d %v", tc.ref, name, v, ok, tc.name, tc.version, tc.ok)
		}
	}
}

// FuzzContainerGroupRef: any input is read without panicking, and a
// definition's ARN reads back as its name and version.
func FuzzContainerGroupRef(f *testing.F) {
	for _, s := range []string{"arena", "arena:1", "arn:aws:gamelift:us-west-2:1:containergroupdefinition/arena:7", "arn:", ":", "a:-1"} {
		f.Add(s, 3)
	}
	a := Account{Region: "us-west-2", ID: "123456789012"}
	f.Fuzz(func(t *testing.T, ref string, version int) {
		name, v, ok := ContainerGroupRef(ref)
		if ok && v < 0 {
			t.Fatalf("%q: version %d", ref, v)
		}
		if strings.ContainsAny(ref, ":/") || version < 1 {
			return
		}
		name, v, ok = ContainerGroupRef(a.ContainerGroupDefinitionARN(ref, version))
		if name != ref || v != version || !ok {
			t.Fatalf("ARN of %q version %d read as %q %d %v", ref, version, name, v, ok)
		}
	})
}
