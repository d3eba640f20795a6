package store

import "github.com/anylift/anylift/internal/game"

// TagTx reads and writes resource tags, keyed by the resource's ARN.
type TagTx interface {
	// PutTags adds or overwrites tags on arn.
	PutTags(arn string, tags []game.Tag) error
	// DeleteTags removes the given keys from arn; absent keys are ignored.
	DeleteTags(arn string, keys []string) error
	// DeleteAllTags removes every tag of arn (the resource is deleted).
	DeleteAllTags(arn string) error
	// ListTags returns arn's tags by key.
	ListTags(arn string) ([]game.Tag, error)
}
