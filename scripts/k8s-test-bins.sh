#!/usr/bin/env bash
# Kubernetes test binaries: builds etcd and kube-apiserver (and kubectl when
# K8S_TEST_KUBECTL=1) from the Go module proxy alone, and prints the
# directory that holds them, for controller-runtime's envtest:
#
#   export KUBEBUILDER_ASSETS=$(scripts/k8s-test-bins.sh)
#
# The binaries go to ~/.cache/anylift-k8s-test-bins/<kubernetes>-<etcd>/
# (or $K8S_TEST_BINS_DIR). When they are there already the script prints the
# directory and exits at once. A build needs no network but the module proxy:
# kube-apiserver cannot be built with `go install` (k8s.io/kubernetes replaces
# its staging modules with ../ paths), so the script writes a throwaway module
# that requires k8s.io/kubernetes and points each staging module it requires
# at the matching published version (v1.X.Y -> v0.X.Y); etcd's server module
# gets the same treatment for its sibling modules. A cold build takes about
# five minutes of two cores; with Go's build cache warm, seconds.
#
# Versions: K8S_VERSION (default 1.37.2), ETCD_VERSION (default 3.6.16).
# Everything but the printed directory goes to stderr.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.37.2}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
OUT=${K8S_TEST_BINS_DIR:-$HOME/.cache/anylift-k8s-test-bins/$K8S_VERSION-$ETCD_VERSION}

cmds=(kube-apiserver)
[ "${K8S_TEST_KUBECTL:-}" = 1 ] && cmds+=(kubectl)

present() {
  [ -x "$OUT/etcd" ] || return 1
  local c
  for c in "${cmds[@]}"; do [ -x "$OUT/$c" ] || return 1; done
}
if present; then
  echo "$OUT"
  exit 0
fi

command -v go >/dev/null || { echo "k8s-test-bins: go is not installed" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
# One build at a time per output directory; a second caller waits, then
# finds the binaries.
exec 9>"$OUT.lock"
flock 9
if present; then
  echo "$OUT"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
# The binaries are built into a staging directory and moved in place one by
# one, each after it is complete, so an interrupted build never leaves a
# truncated binary that looks present.
stage="$work/out"
mkdir -p "$stage" "$work/k8s" "$work/etcd" "$OUT"

minor=${K8S_VERSION#*.}
minor=${minor%%.*}
staging_version="v0.${K8S_VERSION#*.}"

echo "k8s-test-bins: building ${cmds[*]} v$K8S_VERSION and etcd v$ETCD_VERSION into $OUT" >&2
start=$SECONDS

# kube-apiserver (and kubectl).
cd "$work/k8s"
gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')
[ -f "$gomod" ] || { echo "k8s-test-bins: k8s.io/kubernetes v$K8S_VERSION: no go.mod from the module proxy" >&2; exit 1; }
{
  printf 'module anylift.invalid/k8stestbins\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$K8S_VERSION"
  # Each staging module appears in kubernetes' go.mod as "k8s.io/<name> v0.0.0".
  awk -v v="$staging_version" '$1 ~ /^k8s\.io\/[a-z0-9-]+$/ && $2 == "v0.0.0" && NF == 2 { printf "\t%s => %s %s\n", $1, $1, v }' "$gomod" | sort -u
  printf ')\n'
} > go.mod
{
  printf '//go:build tools\n\npackage tools\n\nimport (\n'
  for c in "${cmds[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
  printf ')\n'
} > tools.go
go mod tidy >&2
# Without the version stamps both binaries call themselves v0.0.0-master,
# which kubectl and clients refuse to parse.
ldflags="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
pkgs=()
for c in "${cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
go build -trimpath -ldflags="$ldflags" -o "$stage/" "${pkgs[@]}" >&2

# etcd: its server module replaces api, client and pkg with ../ paths.
cd "$work/etcd"
{
  printf 'module anylift.invalid/etcdtestbin\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v%s\n\nreplace (\n' "$ETCD_VERSION"
  for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
    printf '\tgo.etcd.io/etcd/%s => go.etcd.io/etcd/%s v%s\n' "$m" "$m" "$ETCD_VERSION"
  done
  printf ')\n'
} > go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
go mod tidy >&2
go build -trimpath -ldflags="-s -w" -o "$stage/etcd" go.etcd.io/etcd/server/v3 >&2

for c in "${cmds[@]}" etcd; do mv -f "$stage/$c" "$OUT/$c"; done
echo "k8s-test-bins: built in $((SECONDS - start)) s" >&2
echo "$OUT"
