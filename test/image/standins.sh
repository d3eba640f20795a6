#!/usr/bin/env bash
# Stand-ins for the registry images deploy/compose/several-nodes.yaml
# names, made of this machine's Debian packages, for machines that cannot
# pull them (test/image/compose.sh uses them there):
#
#   docker.io/library/nginx:1.27   nginx (apt-get install nginx-light) on an
#                                  empty base; reads /etc/nginx/nginx.conf
#   docker.io/library/postgres:16  PostgreSQL 15 (the machine's), which on
#                                  first start makes POSTGRES_USER with
#                                  POSTGRES_PASSWORD (scram-sha-256) and
#                                  POSTGRES_DB in /var/lib/postgresql/data,
#                                  and answers pg_isready, as the real one
#
# Each binary is copied with the shared libraries ldd lists; the postgres
# one runs through busybox (apt-get install busybox-static) as uid 999.
# Usage: test/image/standins.sh ENGINE... (for example: podman --runtime runc)
set -euo pipefail
engine=("$@")
[ ${#engine[@]} -gt 0 ] || { echo "usage: standins.sh ENGINE..." >&2; exit 2; }

copy_with_libs() { # ROOT FILE...
  local root=$1 f lib
  shift
  for f in "$@"; do
    mkdir -p "$root$(dirname "$f")"
    cp -L "$f" "$root$f"
    { ldd "$f" 2>/dev/null || true; } | awk '/=>/ {print $3} /^[[:space:]]*\// {print $1}' | while read -r lib; do
      [ -n "$lib" ] && [ -e "$lib" ] || continue
      mkdir -p "$root$(dirname "$lib")"
      cp -L "$lib" "$root$lib"
    done
  done
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# nginx
nginx=$(command -v nginx || echo /usr/sbin/nginx)
r=$work/nginx/rootfs
copy_with_libs "$r" "$nginx"
mkdir -p "$r/etc/nginx" "$r/var/lib/nginx" "$r/var/log/nginx" "$r/run" "$r/tmp"
chmod 1777 "$r/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
cat > "$work/nginx/Containerfile" <<CF
FROM scratch
COPY rootfs/ /
STOPSIGNAL SIGQUIT
ENTRYPOINT ["$nginx", "-g", "daemon off;"]
CF
"${engine[@]}" build -q -t docker.io/library/nginx:1.27 "$work/nginx" >/dev/null

# postgres
pg=$(ls -d /usr/lib/postgresql/*/ | sort -V | tail -1)
pg=${pg%/}
share=/usr/share/postgresql/$(basename "$pg")
r=$work/postgres/rootfs
copy_with_libs "$r" "$pg/bin/postgres" "$pg/bin/initdb" "$pg/bin/pg_isready" /bin/busybox
mkdir -p "$r/etc" "$r$pg/lib" "$r/usr/share/postgresql" "$r/var/lib/postgresql/data" "$r/var/run/postgresql" "$r/tmp"
cp -a "$pg/lib/." "$r$pg/lib/"
cp -a "$share" "$r/usr/share/postgresql/"
cp -a /usr/share/zoneinfo "$r/usr/share/"
chmod 1777 "$r/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:postgres:/var/lib/postgresql:/bin/sh\n' > "$r/etc/passwd"
printf 'root:x:0:\npostgres:x:999:\n' > "$r/etc/group"
cat > "$r/entrypoint.sh" <<'SH'
#!/bin/busybox sh
set -e
D=/var/lib/postgresql/data
if [ ! -s "$D/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pw
  initdb -D "$D" -U "$POSTGRES_USER" --pwfile=/tmp/pw --auth-local=trust --auth-host=scram-sha-256 \
    --locale=C --encoding=UTF8 >/dev/null
  rm /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$D/pg_hba.conf"
  echo "CREATE DATABASE \"$POSTGRES_DB\";" | postgres --single -D "$D" -j postgres >/dev/null
fi
exec postgres -D "$D" -c listen_addresses='*'
SH
chmod 0755 "$r/entrypoint.sh"
cat > "$work/postgres/Containerfile" <<CF
FROM scratch
COPY rootfs/ /
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN ["/bin/busybox", "chown", "-R", "999:999", "/var/lib/postgresql", "/var/run/postgresql"]
ENV PATH=$pg/bin:/bin
USER 999:999
ENTRYPOINT ["/entrypoint.sh"]
CF
"${engine[@]}" build -q -t docker.io/library/postgres:16 "$work/postgres" >/dev/null
echo "stand-ins built: docker.io/library/nginx:1.27 ($nginx), docker.io/library/postgres:16 ($pg)"
