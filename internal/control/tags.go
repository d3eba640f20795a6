package control

import (
	"context"
	"strings"

	"github.com/anylift/anylift/internal/game"
	"github.com/anylift/anylift/internal/store"
	"github.com/anylift/anylift/internal/wire"
)

// maxTags is GameLift's limit of tags per resource.
const maxTags = 200

// TagResource adds or overwrites tags on the resource named by its ARN.
func (s *Service) TagResource(ctx context.Context, in *wire.TagResourceRequest) (*wire.TagResourceResponse, error) {
	arn := containerGroupTagARN(*in.ResourceARN)
	err := s.update(ctx, func(tx store.Tx) error {
		if err := s.resourceExists(tx, arn); err != nil {
			return err
		}
		if err := tx.PutTags(arn, wire.GameTags(in.Tags)); err != nil {
			return err
		}
		tags, err := tx.ListTags(arn)
		if err != nil {
			return err
		}
		if len(tags) > maxTags {
			return game.Errorf(game.TaggingFailed, "a resource can have at most %d tags", maxTags)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &wire.TagResourceResponse{}, nil
}

// UntagResource removes tag keys from the resource.
func (s *Service) UntagResource(ctx context.Context, in *wire.UntagResourceRequest) (*wire.UntagResourceResponse, error) {
	arn := containerGroupTagARN(*in.ResourceARN)
	err := s.update(ctx, func(tx store.Tx) error {
		if err := s.resourceExists(tx, arn); err != nil {
			return err
		}
		return tx.DeleteTags(arn, in.TagKeys)
	})
	if err != nil {
		return nil, err
	}
	return &wire.UntagResourceResponse{}, nil
}

// ListTagsForResource lists the resource's tags.
func (s *Service) ListTagsForResource(ctx context.Context, in *wire.ListTagsForResourceRequest) (*wire.ListTagsForResourceResponse, error) {
	out := &wire.ListTagsForResourceResponse{Tags: []wire.Tag{}}
	arn := containerGroupTagARN(*in.ResourceARN)
	err := s.view(ctx, func(tx store.Tx) error {
		if err := s.resourceExists(tx, arn); err != nil {
			return err
		}
		tags, err := tx.ListTags(arn)
		for _, t := range tags {
			out.Tags = append(out.Tags, wire.Tag{Key: wire.String(t.Key), Value: &t.Value})
		}
		return err
	})
	return out, err
}

// resourceExists answers NotFound unless arn names a resource this service
// holds. The resource type is the ARN's "<type>/" segment.
func (s *Service) resourceExists(tx store.Tx, arn string) error {
	typ, id, ok := splitARN(arn)
	if !ok {
		return game.Errorf(game.InvalidRequest, "ResourceARN %s is not a GameLift ARN", arn)
	}
	var err error
	switch typ {
	case "location":
		_, err = tx.GetLocation(id)
	default:
		if check, ok := s.tagCheckers()[typ]; ok {
			err = check(tx, id)
		} else {
			return game.Errorf(game.InvalidRequest, "resources of type %s cannot be tagged", typ)
		}
	}
	if game.IsKind(err, game.NotFound) {
		return game.Errorf(game.NotFound, "resource %s not found", arn)
	}
	return err
}

// splitARN returns the resource type and id of a GameLift ARN.
func splitARN(arn string) (typ, id string, ok bool) {
	parts := splitN(arn, ':', 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "gamelift" {
		return "", "", false
	}
	res := parts[5]
	for i := 0; i < len(res); i++ {
		if res[i] == '/' {
			return res[:i], res[i+1:], i+1 < len(res)
		}
	}
	return "", "", false
}

func splitN(s string, sep byte, n int) []string {
	var out []string
	for len(out) < n-1 {
		i := -1
		for j := 0; j < len(s); j++ {
			if s[j] == sep {
				i = j
				break
			}
		}
		if i < 0 {
			break
		}
		out = append(out, s[:i])
		s = s[i+1:]
	}
	return append(out, s)
}

// containerGroupTagARN is the ARN tags of a container group definition
// are kept under: the definition's, whichever version an ARN names.
func containerGroupTagARN(arn string) string {
	i := strings.LastIndex(arn, ":containergroupdefinition/")
	if i < 0 {
		return arn
	}
	if j := strings.LastIndexByte(arn, ':'); j > i {
		return arn[:j]
	}
	return arn
}
