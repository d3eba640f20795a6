#!/usr/bin/env bash
# Release archives: cross-compiles anylift for every released platform and
# packs each binary with README.md, LICENSE (when there is one) and the
# deployment files as committed, with SHA-256 checksums:
#
#   scripts/release.sh v1.2.0          (writes dist/)
#
# dist/anylift_v1.2.0_linux_amd64.tar.gz, _linux_arm64.tar.gz,
# _darwin_arm64.tar.gz, _windows_amd64.zip, and dist/SHA256SUMS
# (check with: cd dist && sha256sum -c SHA256SUMS). The binaries are
# static (CGO_ENABLED=0), built with -trimpath, and stamped with the
# version and the commit ("anylift version" prints both). Archive entries
# carry the commit's time and no owner, so the same commit and toolchain
# give the same archives. A work tree with uncommitted changes is refused
# unless ALLOW_DIRTY=1 (the binaries then say "modified").
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

version=${1:-}
case "$version" in
  v[0-9]*) ;;
  *) echo "usage: scripts/release.sh vMAJOR.MINOR.PATCH" >&2; exit 2 ;;
esac
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ] && [ "${ALLOW_DIRTY:-}" != 1 ]; then
  echo "release.sh: the work tree has uncommitted changes (ALLOW_DIRTY=1 to build anyway)" >&2
  exit 1
fi
# The commit's time, for reproducible archive entries.
epoch=$(git log -1 --format=%ct)
stamp=$(date -u -d "@$epoch" +%Y%m%d%H%M.%S)

platforms=(linux/amd64 linux/arm64 darwin/arm64 windows/amd64)
extras=(README.md deploy/systemd deploy/compose)
git cat-file -e HEAD:LICENSE 2>/dev/null && extras+=(LICENSE)
out=dist
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for p in "${platforms[@]}"; do
  goos=${p%/*} goarch=${p#*/}
  name=anylift_${version}_${goos}_${goarch}
  dir=$work/$name
  mkdir -p "$dir"
  exe=anylift
  [ "$goos" = windows ] && exe=anylift.exe
  echo "== $name"
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch GOFLAGS= go build -trimpath -buildvcs=true \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit" \
    -o "$dir/$exe" ./cmd/anylift
  # The files as committed, whatever the work tree holds.
  git archive --format=tar HEAD "${extras[@]}" | tar -x -C "$dir"
  find "$dir" -exec touch -h -t "$stamp" {} +
  if [ "$goos" = windows ]; then
    (cd "$work" && find "$name" -print | LC_ALL=C sort | zip -q -X -@ "$OLDPWD/$out/$name.zip")
  else
    tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
      -cf - "$name" | gzip -9 -n > "$out/$name.tar.gz"
  fi
done

(cd "$out" && sha256sum -- *.tar.gz *.zip > SHA256SUMS)
echo "== $out (version $version, commit ${commit:0:12})"
cat "$out/SHA256SUMS"
