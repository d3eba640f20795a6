package sqlite

// CheckpointEvery and SetCheckpointed let the tests follow the checkpointer.
const CheckpointEvery = checkpointEvery

func SetCheckpointed(f func(log, copied int, err error)) { checkpointed = f }
