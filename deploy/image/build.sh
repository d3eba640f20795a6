#!/usr/bin/env bash
# Builds the Anylift image from a binary built here, for machines that
# cannot pull the Go image the root Containerfile builds in:
#
#   deploy/image/build.sh [TAG]        (default TAG: localhost/anylift:dev)
#
# VERSION (default: git describe) and COMMIT (default: git rev-parse HEAD)
# are stamped into the binary and the image's labels. CONTAINER_TOOL picks
# podman, buildah or docker (default: the first one installed). GOARCH
# picks the image's architecture (default: this machine's).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/usr/local/go/bin:$PATH"

tag=${1:-localhost/anylift:dev}
version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
commit=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || true)}
tool=${CONTAINER_TOOL:-}
if [ -z "$tool" ]; then
  for t in podman buildah docker; do
    if command -v "$t" >/dev/null; then tool=$t; break; fi
  done
fi
[ -n "$tool" ] || { echo "build.sh: no podman, buildah or docker here" >&2; exit 1; }
ca=/etc/ssl/certs/ca-certificates.crt
[ -r "$ca" ] || { echo "build.sh: no CA bundle at $ca (apt-get install ca-certificates)" >&2; exit 1; }

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
CGO_ENABLED=0 GOFLAGS= go build -trimpath -buildvcs=false \
  -ldflags "-s -w -X main.version=$version -X main.commit=$commit" \
  -o "$ctx/anylift" ./cmd/anylift
cp "$ca" "$ctx/ca-certificates.crt"
mkdir "$ctx/empty"
cp deploy/image/Containerfile.prebuilt "$ctx/Containerfile"

format=()
case "$tool" in
  podman|buildah) format=(--format docker) ;; # keeps HEALTHCHECK
esac
build=build
[ "$tool" = buildah ] && build=bud
"$tool" "$build" "${format[@]}" --build-arg "VERSION=$version" --build-arg "COMMIT=$commit" \
  -f "$ctx/Containerfile" -t "$tag" "$ctx"
echo "built $tag ($version, commit ${commit:0:12}) with $tool"
