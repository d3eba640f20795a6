package examplestest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGameLiftWrapperProfile checks docs/gamelift-wrapper.md as far as this
// machine allows (GameLift's wrapper itself is not here): the AWS profile
// files it shows, written as shown, lead the AWS CLI (which reads the same
// settings as the AWS SDK for Go v2) to anylift dev, whose fleet and
// location ARNs are those dev prints, in the form the guide's config.yaml
// uses.
func TestGameLiftWrapperProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the anylift binary")
	}
	if _, err := exec.LookPath("aws"); err != nil {
		t.Skip("the AWS CLI is not installed")
	}
	b, err := os.ReadFile("../../docs/gamelift-wrapper.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	dir := workDir(t)
	d := startDev(t, dir)
	arns := regexp.MustCompile(`(?m)^  (fleet|location) ARN +(\S+)$`).FindAllStringSubmatch(d.out.String(), -1)
	if len(arns) != 2 {
		t.Fatalf("dev does not print the fleet and location ARNs:\n%s", d.out.String())
	}
	fleetARN, locationARN := arns[0][2], arns[1][2]
	if got := guideValue(t, doc, "fleet-arn"); normalize(got) != normalize(fleetARN) {
		t.Errorf("the guide's fleet-arn %s is not in the form dev prints: %s", got, fleetARN)
	}
	if got := guideValue(t, doc, "location-arn"); got != locationARN {
		t.Errorf("the guide's location-arn %s is not dev's %s", got, locationARN)
	}

	creds := iniBlock(t, doc, "`~/.aws/credentials`:")
	configs := []string{iniBlock(t, doc, "`~/.aws/config`:"), iniBlock(t, doc, "GameLift alone there, use a services section instead:")}
	for i, config := range configs {
		aws := t.TempDir()
		os.WriteFile(filepath.Join(aws, "credentials"), []byte(creds), 0o600)
		os.WriteFile(filepath.Join(aws, "config"), []byte(strings.ReplaceAll(config, readmeAPI, d.api)), 0o600)
		cmd := exec.Command("aws", "gamelift", "describe-fleet-attributes", "--profile", "anylift",
			"--query", "FleetAttributes[0].FleetArn", "--output", "text")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + aws,
			"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(aws, "credentials"), "AWS_CONFIG_FILE=" + filepath.Join(aws, "config")}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != fleetARN {
			t.Errorf("profile %d of the guide: aws answered %v\n%s", i+1, err, out)
		}
	}
}

// iniBlock is the ```ini block that follows after in doc.
func iniBlock(t *testing.T, doc, after string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, after)
	if ok {
		_, rest, ok = strings.Cut(rest, "```ini\n")
	}
	block, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatalf("docs/gamelift-wrapper.md has no ini block after %q", after)
	}
	return block
}

// guideValue is the value of key in the guide's config.yaml.
func guideValue(t *testing.T, doc, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(key) + `: (\S+)$`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("the guide's config.yaml has no %s", key)
	}
	return m[1]
}
