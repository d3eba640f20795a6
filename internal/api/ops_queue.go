package api

import "github.com/anylift/anylift/internal/queueing"

func queueOps(s *queueing.Service, m map[string]handler) {
	m["CreateGameSessionQueue"] = op(s.CreateGameSessionQueue)
	m["DescribeGameSessionQueues"] = op(s.DescribeGameSessionQueues)
	m["UpdateGameSessionQueue"] = op(s.UpdateGameSessionQueue)
	m["DeleteGameSessionQueue"] = op(s.DeleteGameSessionQueue)
	m["StartGameSessionPlacement"] = op(s.StartGameSessionPlacement)
	m["DescribeGameSessionPlacement"] = op(s.DescribeGameSessionPlacement)
	m["StopGameSessionPlacement"] = op(s.StopGameSessionPlacement)
}
