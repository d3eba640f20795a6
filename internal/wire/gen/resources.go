package main

import (
	"bytes"
	"fmt"
	"sort"
)

// The resources an operation acts on, for access policies: which
// top-level members of its input name one, and of which type. Most follow
// from the member's shape; the rest are named per operation. Only the
// resource the operation acts on (or through: an alias) counts, not those
// it refers to (a configuration's rule set and queues, a queue's
// destinations), nor a filter (DescribeMatchmakingConfigurations'
// RuleSetName), nor a compute, which is its fleet's.

// resourceShapes maps a member's shape to the type of resource it names.
var resourceShapes = map[string]string{
	"FleetIdOrArn":                      "fleet",
	"FleetId":                           "fleet",
	"AliasIdOrArn":                      "alias",
	"GameSessionQueueNameOrArn":         "gamesessionqueue",
	"GameSessionQueueName":              "gamesessionqueue",
	"MatchmakingConfigurationName":      "matchmakingconfiguration",
	"MatchmakingRuleSetName":            "matchmakingruleset",
	"CustomInputLocationStringModel":    "location",
	"CustomLocationNameOrArnModel":      "location",
	"AmazonResourceName":                "arn",
	"ContainerGroupDefinitionNameOrArn": "containergroupdefinition",
}

// resourceMembers names members whose shape does not say: by member name
// in every operation ("*.Name"), or in one ("Operation.Name"). An empty
// type says the member names no resource the operation acts on.
var resourceMembers = map[string]string{
	"*.GameSessionId":                     "gamesession",
	"*.GameSessionArn":                    "gamesession",
	"*.RuleSetName":                       "",
	"CreateMatchmakingConfiguration.Name": "matchmakingconfiguration",
	"CreateMatchmakingRuleSet.Name":       "matchmakingruleset",
	"CreateGameSession.GameSessionId":     "", // the deprecated id a new session takes
	// A container fleet's definitions are what it runs, and filters.
	"*.GameServerContainerGroupDefinitionName":  "",
	"*.PerInstanceContainerGroupDefinitionName": "",
	"*.ContainerGroupDefinitionName":            "",
	"CreateContainerGroupDefinition.Name":       "containergroupdefinition",
}

// resourceType is the type of resource member mn of op's input names, or
// "" for none.
func (g *generator) resourceType(op, mn string) string {
	if t, ok := resourceMembers[op+"."+mn]; ok {
		return t
	}
	if t, ok := resourceMembers["*."+mn]; ok {
		return t
	}
	shape := g.m.Shapes[g.m.Operations[op].Input.Shape].Members[mn].Shape
	if s := g.m.Shapes[shape]; s.Type == "list" {
		shape = s.Member.Shape
	}
	return resourceShapes[shape]
}

// resources writes a Resources method for every operation input that
// names a resource.
func (g *generator) resources() []byte {
	var b bytes.Buffer
	header(&b)
	b.WriteString("// A ResourceNamer is an operation's input that names the resources the\n" +
		"// operation acts on, as (type, id or name or ARN) pairs: type is\n" +
		"// \"fleet\", \"alias\", \"gamesession\", \"gamesessionqueue\",\n" +
		"// \"matchmakingconfiguration\", \"matchmakingruleset\", \"location\",\n" +
		"// \"containergroupdefinition\" or\n" +
		"// \"arn\" (a resource ARN of any type). Inputs of operations that name none\n" +
		"// do not implement it.\n" +
		"type ResourceNamer interface {\n\tResources(add func(typ, id string))\n}\n\n")
	ops := make([]string, 0, len(g.m.Operations))
	for n := range g.m.Operations {
		ops = append(ops, n)
	}
	sort.Strings(ops)
	seen := map[string]bool{}
	for _, op := range ops {
		o := g.m.Operations[op]
		if o.Input == nil || seen[o.Input.Shape] {
			continue
		}
		in := o.Input.Shape
		var body bytes.Buffer
		for _, mn := range g.order[in] {
			typ := g.resourceType(op, mn)
			if typ == "" {
				continue
			}
			switch g.m.Shapes[g.m.Shapes[in].Members[mn].Shape].Type {
			case "list":
				fmt.Fprintf(&body, "\tfor _, id := range v.%s {\n\t\tadd(%q, id)\n\t}\n", mn, typ)
			case "string":
				fmt.Fprintf(&body, "\tif v.%s != nil {\n\t\tadd(%q, *v.%s)\n\t}\n", mn, typ, mn)
			}
		}
		if body.Len() == 0 {
			continue
		}
		seen[in] = true
		fmt.Fprintf(&b, "// Resources names the resources %s acts on.\nfunc (v *%s) Resources(add func(typ, id string)) {\n%s}\n\n", op, in, body.String())
	}
	return b.Bytes()
}
