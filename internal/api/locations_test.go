package api_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/anylift/anylift/internal/apitest"
)

func TestLocationsWithGoSDK(t *testing.T) {
	for name, opts := range apitest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			env := apitest.Start(t, opts...)
			gl := env.Client()
			ctx := context.Background()
			out, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-home")})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := aws.ToString(out.Location.LocationArn), "arn:aws:gamelift:us-west-2:123456789012:location/custom-home"; got != want {
				t.Errorf("LocationArn = %q, want %q", got, want)
			}
			_, err = gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-home")})
			var conflict *types.ConflictException
			if !errors.As(err, &conflict) || conflict.ErrorMessage() == "" {
				t.Fatalf("duplicate CreateLocation: got %v, want ConflictException with a message", err)
			}
			_, err = gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("not-custom")})
			var invalid *types.InvalidRequestException
			if !errors.As(err, &invalid) {
				t.Fatalf("bad name: got %v, want InvalidRequestException", err)
			}
			for _, n := range []string{"custom-b", "custom-c"} {
				if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(n)}); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			p := gamelift.NewListLocationsPaginator(gl, &gamelift.ListLocationsInput{Limit: aws.Int32(2)})
			pages := 0
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, l := range page.Locations {
					names = append(names, aws.ToString(l.LocationName))
				}
			}
			if len(names) != 3 || pages != 2 {
				t.Errorf("listed %v in %d pages, want 3 locations in 2 pages", names, pages)
			}
			if _, err := gl.DeleteLocation(ctx, &gamelift.DeleteLocationInput{LocationName: aws.String("custom-b")}); err != nil {
				t.Fatal(err)
			}
			_, err = gl.DeleteLocation(ctx, &gamelift.DeleteLocationInput{LocationName: aws.String("custom-b")})
			var nf *types.NotFoundException
			if !errors.As(err, &nf) {
				t.Fatalf("second delete: got %v, want NotFoundException", err)
			}
		})
	}
}

func TestLocationsWithJSON(t *testing.T) {
	env := apitest.Start(t)
	r := env.CallJSON(t, "CreateLocation", `{"LocationName": "custom-json"}`)
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		t.Errorf("Content-Type = %q", ct)
	}
	if r.Header.Get("X-Amzn-Requestid") == "" {
		t.Error("no x-amzn-RequestId header")
	}
	r = env.CallJSON(t, "ListLocations", `{}`)
	locs, _ := r.JSON(t)["Locations"].([]any)
	if len(locs) != 1 {
		t.Fatalf("ListLocations = %s", r.Body)
	}
	r = env.CallJSON(t, "ListLocations", `{"Filters": ["AWS"]}`)
	if locs, ok := r.JSON(t)["Locations"].([]any); !ok || len(locs) != 0 {
		t.Errorf("ListLocations AWS = %s, want an empty list", r.Body)
	}
	r = env.CallJSON(t, "CreateLocation", `{"LocationName": 12}`)
	if r.Status != 400 || r.ErrorType(t) != "InvalidRequestException" {
		t.Errorf("wrong member type: %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	if m["message"] == "" || m["message"] != m["Message"] {
		t.Errorf("error body must carry message and Message: %s", r.Body)
	}
}
