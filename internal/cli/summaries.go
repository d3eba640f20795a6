package cli

// summaries say, per served operation, what it does on Anylift: the
// DESCRIPTION of "anylift <operation> --help". The flags' documentation
// is the model's (commands_gen.go); this is behaviour, so it is written
// here by hand. A test checks that every served operation has one.
var summaries = map[string]string{
	"AcceptMatch": "Accepts or rejects a proposed match for the players named, when the matchmaking " +
		"configuration asks for acceptance. When every player accepts, the match is placed; a rejection " +
		"or the acceptance timeout ends the proposed match.",
	"CreateAlias": "Creates an alias: a name that points at a fleet (SIMPLE) or answers a fixed message " +
		"(TERMINAL). Game sessions may be created through an alias instead of a fleet id.",
	"CreateContainerFleet": "Creates a container fleet in the home region: ACTIVE, wanting one instance, when " +
		"--game-server-container-group-definition-name is given (a name runs its latest version, an ARN " +
		"may name one); CREATED, running nothing, without. Each instance runs " +
		"--game-server-container-groups-per-instance game server container groups; their container ports " +
		"map to the instance's connection ports (--instance-connection-port-range, from 4192 by default).",
	"CreateContainerGroupDefinition": "Creates a container group definition: the containers a container " +
		"fleet runs together on each of its instances (a pod on Kubernetes), with their images, ports, " +
		"environment and limits. GAME_SERVER groups hold one game server container and up to 8 support " +
		"containers; PER_INSTANCE groups hold support containers only. It is READY at once: images are " +
		"pulled by the cluster, not copied.",
	"CreateFleet": "Creates an Anywhere fleet (--compute-type ANYWHERE; other compute types are refused) " +
		"in one or more existing custom locations (see create-location). The fleet is ACTIVE at once; " +
		"register computes into it (register-compute, or run \"anylift agent\") to host game sessions.",
	"CreateGameSession": "Starts a game session on an Anywhere fleet: a ready server process in the " +
		"location asked for (the fleet's only location when there is one and none is given) is told to " +
		"start it. The session is ACTIVATING until the process activates it, then ACTIVE with the " +
		"process's IP address and port; players then join with create-player-session.",
	"CreateGameSessionQueue": "Creates a game session queue: an ordered list of fleets or aliases that " +
		"start-game-session-placement places game sessions on, with a timeout. Its NotificationTarget, " +
		"when set, receives the placement events.",
	"CreateLocation": "Creates a custom location (named custom-...): the place an Anywhere fleet's computes " +
		"are in. A fleet must name existing custom locations.",
	"CreateMatchmakingConfiguration": "Creates a FlexMatch matchmaking configuration: a rule set, the queues " +
		"that place matched players, timeouts, and whether players must accept a match.",
	"CreateMatchmakingRuleSet": "Creates a FlexMatch rule set from its JSON body (teams, player attributes, " +
		"rules, expansions). The body is checked as validate-matchmaking-rule-set checks it.",
	"CreatePlayerSession": "Reserves a seat in an ACTIVE game session for one player. The player session " +
		"is RESERVED until the game server accepts it (the server SDK's AcceptPlayerSession) within the " +
		"reservation timeout, then ACTIVE; it ends COMPLETED when the server removes the player.",
	"CreatePlayerSessions": "Reserves seats in an ACTIVE game session for several players at once: all of " +
		"them, or none when there are not enough free seats.",
	"DeleteAlias": "Deletes an alias. Fleets it pointed at are not changed.",
	"DeleteContainerFleet": "Deletes a container fleet: its game server container groups are deregistered " +
		"and its live game sessions end.",
	"DeleteContainerGroupDefinition": "Deletes one version of a container group definition (--version-number), " +
		"all but the newest versions (--version-count-to-retain), or, with neither, the whole definition and its tags.",
	"DeleteScalingPolicy":            "Deletes a container fleet's scaling policy; no record of it is kept.",
	"DeleteFleet":                    "Deletes a fleet: its computes are deregistered and its live game sessions end.",
	"DeleteGameSessionQueue":         "Deletes a game session queue.",
	"DeleteLocation":                 "Deletes a custom location that no fleet uses.",
	"DeleteMatchmakingConfiguration": "Deletes a matchmaking configuration.",
	"DeleteMatchmakingRuleSet":       "Deletes a matchmaking rule set.",
	"DeregisterCompute": "Removes a compute from its fleet. The game sessions it hosts end, and its " +
		"server processes can no longer connect.",
	"DescribeAlias": "Shows one alias.",
	"DescribeContainerFleet": "Shows a container fleet: the definitions it runs, at which versions, its " +
		"connection ports and status.",
	"DescribeContainerGroupPortMappings": "Shows the connection ports a game server container group's " +
		"container ports are reached at (--compute-name names the group).",
	"DescribeContainerGroupDefinition": "Shows one version of a container group definition: the latest, " +
		"or the one --version-number or the ARN names.",
	"DescribeCompute": "Shows one registered compute: its address, location, status and agent endpoint.",
	"DescribeFleetAttributes": "Shows fleets' attributes (all fleets, page by page, when no --fleet-ids " +
		"are given).",
	"DescribeFleetCapacity": "Shows fleets' capacity. On Anylift each registered compute counts as an " +
		"instance (active, desired and maximum); an idle one hosts no live game session.",
	"DescribeFleetEvents": "Lists a fleet's events: its creation and activation, server process " +
		"crashes and other process failures reported by \"anylift agent\", and more.",
	"DescribeFleetLocationAttributes": "Shows the locations of a fleet and each one's status.",
	"DescribeScalingPolicies": "Lists a fleet's scaling policies by name, once per location of the fleet " +
		"(or for --location), those of --status-filter when given.",
	"DescribeFleetLocationCapacity": "Shows a fleet's capacity in one of its locations (see describe-fleet-capacity).",
	"DescribeFleetLocationUtilization": "Shows a fleet's use in one of its locations: server processes, " +
		"game sessions and players.",
	"DescribeFleetUtilization": "Shows fleets' use: active server processes, game sessions and player " +
		"sessions, summed over their locations.",
	"DescribeGameSessionDetails":   "Lists game sessions with their protection policy.",
	"DescribeGameSessionPlacement": "Shows a game session placement: PENDING until a process takes it, then FULFILLED with its game session, or TIMED_OUT, CANCELLED or FAILED.",
	"DescribeGameSessionQueues":    "Shows game session queues (all of them, page by page, when none are named).",
	"DescribeGameSessions": "Lists game sessions of a fleet, an alias or a location, or shows one by " +
		"--game-session-id, with their status, address and player counts.",
	"DescribeMatchmaking":               "Shows matchmaking tickets: their status and, once matched, the players' connection information.",
	"DescribeMatchmakingConfigurations": "Shows matchmaking configurations.",
	"DescribeMatchmakingRuleSets":       "Shows matchmaking rule sets.",
	"DescribePlayerSessions": "Lists player sessions of a game session or a player, or shows one by " +
		"--player-session-id.",
	"DescribeRuntimeConfiguration": "Shows a fleet's runtime configuration: the server processes " +
		"\"anylift agent\" keeps running on each compute (launch path, parameters, how many).",
	"GetComputeAuthToken": "Issues an auth token for a registered compute. A game server passes it to the " +
		"server SDK's InitSDK to connect; it expires (the service's --auth-token-ttl).",
	"ListAliases": "Lists aliases.",
	"ListContainerFleets": "Lists container fleets, those running a container group definition when one " +
		"is named (a name: any of its versions; an ARN with a version: that version).",
	"ListContainerGroupDefinitionVersions": "Lists the versions of a container group definition, newest first.",
	"ListContainerGroupDefinitions": "Lists container group definitions (the latest version of each), by " +
		"name, of one type when --container-group-type is given.",
	"ListCompute":   "Lists a fleet's registered computes.",
	"ListFleets":    "Lists fleet ids.",
	"ListLocations": "Lists locations (--filters CUSTOM: those made with create-location).",
	"ListTagsForResource": "Lists the tags of a fleet, alias, location, queue, matchmaking configuration, " +
		"rule set or container group definition, by ARN.",
	"PutScalingPolicy": "Creates or replaces (by --name) a scaling policy of a container fleet. A TargetBased " +
		"policy on PercentAvailableGameSessions keeps that percentage of the fleet's game server slots free " +
		"(--target-configuration TargetValue=20): it raises the desired instances as soon as sessions need " +
		"it, and lowers them after the fleet has needed fewer for 5 minutes. A RuleBased policy changes the " +
		"desired instances once its rule has held for --evaluation-periods minutes. Anywhere fleets cannot " +
		"be auto-scaled.",
	"RegisterCompute": "Registers a machine as a compute of an Anywhere fleet, in one of its custom " +
		"locations, with the address players connect to. \"anylift agent\" does this itself.",
	"ResolveAlias":       "Answers the fleet id an alias points at.",
	"SearchGameSessions": "Finds game sessions of a fleet or alias by a filter expression and sorts them.",
	"StartGameSessionPlacement": "Asks a queue for a game session: the placement waits, up to the queue's " +
		"timeout, for a free server process on the queue's fleets, then starts the session there and " +
		"reserves seats for the players named.",
	"StartMatchBackfill": "Starts matchmaking to fill empty seats of a running game session made by " +
		"FlexMatch.",
	"StartMatchmaking":  "Submits a matchmaking ticket for one or more players to a matchmaking configuration.",
	"StartFleetActions": "Resumes a container fleet's auto-scaling (AUTO_SCALING) in a location, the home region by default.",
	"StopFleetActions": "Suspends a container fleet's auto-scaling (AUTO_SCALING) in a location, the home region " +
		"by default; its policies stay, and UpdateFleetCapacity still works.",
	"StopGameSessionPlacement": "Cancels a placement that is still PENDING.",
	"StopMatchmaking":          "Cancels a matchmaking ticket.",
	"TagResource":              "Adds tags to a resource, by ARN.",
	"TerminateGameSession": "Ends a game session. TRIGGER_ON_PROCESS_TERMINATE asks its server process to " +
		"end and moves the session to TERMINATING; FORCE_TERMINATE is refused on Anywhere fleets.",
	"UntagResource": "Removes tags from a resource, by ARN.",
	"UpdateAlias":   "Changes an alias's name, description or routing.",
	"UpdateContainerFleet": "Changes a container fleet: the definitions it runs (a name: the latest version), " +
		"groups per instance, connection ports, protection policy and other attributes. A CREATED fleet given " +
		"a game server container group becomes ACTIVE.",
	"UpdateContainerGroupDefinition": "Writes a new version of a container group definition: the latest " +
		"(or --source-version-number) with the members given replacing its own. A support container list " +
		"replaces the whole list; the group's type cannot change.",
	"UpdateFleetCapacity": "Sets a container fleet's wanted number of instances (--desired-instances) " +
		"and its bounds (--min-size, --max-size) in a location, the home region by default.",
	"UpdateFleetAttributes":          "Changes a fleet's name, description, metric groups, protection policy or resource creation limit.",
	"UpdateGameSession":              "Changes a game session's name, player limit, player session policy, protection or properties, while it is ACTIVATING or ACTIVE.",
	"UpdateGameSessionQueue":         "Changes a queue's destinations, timeout or notification target.",
	"UpdateMatchmakingConfiguration": "Changes a matchmaking configuration.",
	"UpdateRuntimeConfiguration": "Changes the server processes \"anylift agent\" runs on each compute of " +
		"a fleet; agents follow the change (extra processes are stopped).",
	"ValidateMatchmakingRuleSet": "Checks a rule set's JSON body without creating it.",
}

// withoutEffect are, per operation, the flags Anylift reads but that
// describe GameLift's own hosting (builds, scripts, instances, VPCs,
// certificates, containers): their help is one line naming them.
var withoutEffect = map[string][]string{
	"CreateFleet": {"build-id", "script-id", "server-launch-path", "server-launch-parameters", "log-paths",
		"ec2-instance-type", "ec2-inbound-permissions", "peer-vpc-aws-account-id", "peer-vpc-id", "instance-role-arn",
		"certificate-configuration", "instance-role-credentials-provider", "player-gateway-mode", "player-gateway-configuration"},
	"ListCompute": {"container-group-definition-name"},
	"CreateContainerFleet": {"fleet-role-arn", "instance-inbound-permissions", "instance-type", "billing-type",
		"log-configuration", "player-gateway-mode"},
	"UpdateContainerFleet": {"instance-inbound-permission-authorizations", "instance-inbound-permission-revocations",
		"deployment-configuration", "log-configuration"},
	"RegisterCompute": {"certificate-path"},
}
