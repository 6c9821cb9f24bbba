#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster on a free loopback port,
# exported as TEST_DATABASE_URL (which the benchmarks read too); the cluster is
# stopped and removed afterwards. Installs PostgreSQL from Debian's packages
# when no server binaries are present.
set -euo pipefail

find_pgbin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
  command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}

pgbin=$(find_pgbin | head -1 || true)
if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
  echo "PostgreSQL server not found: installing it from Debian's packages" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  pgbin=$(find_pgbin | head -1)
fi

# The knowledge base's migrations create the pgvector extension: install Debian's package for this
# major version, or, where the release has none (bookworm), build Debian's pgvector source package.
major=$(basename "$(dirname "$pgbin")")
if [ ! -f "/usr/share/postgresql/$major/extension/vector.control" ]; then
  echo "pgvector not found: installing it for PostgreSQL $major" >&2
  apt-get update -qq
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$major-pgvector" >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$major" dpkg-dev make gcc >/dev/null
    srcdir=$(mktemp -d /tmp/pgvector-src.XXXXXX)
    echo "deb-src http://deb.debian.org/debian trixie main" > "$srcdir/sources.list"
    apt_src=(-o "Dir::Etc::sourcelist=$srcdir/sources.list" -o "Dir::Etc::sourceparts=-" -o "APT::Get::List-Cleanup=0")
    apt-get "${apt_src[@]}" update -qq
    (cd "$srcdir" && apt-get "${apt_src[@]}" source -qq pgvector >/dev/null 2>&1)
    make -s -C "$srcdir"/pgvector-*/ PG_CONFIG="$pgbin/pg_config" OPTFLAGS="" >/dev/null
    make -s -C "$srcdir"/pgvector-*/ PG_CONFIG="$pgbin/pg_config" install >/dev/null
    rm -rf "$srcdir"
  fi
fi

workdir=$(mktemp -d /tmp/platform-pg.XXXXXX)
port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

# initdb refuses to run as root: run the cluster as the postgres system user then.
if [ "$(id -u)" = "0" ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir "$workdir" postgres
  chown -R postgres "$workdir"
  as_pg() { su postgres -s /bin/bash -c "$*"; }
else
  as_pg() { bash -c "$*"; }
fi

as_pg "'$pgbin/initdb' -D '$workdir/data' -A trust -U postgres --no-sync -E UTF8" >/dev/null
as_pg "'$pgbin/pg_ctl' -D '$workdir/data' -l '$workdir/log' -w -o \"-p $port -k '$workdir' -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200\" start" >/dev/null

stop() {
  as_pg "'$pgbin/pg_ctl' -D '$workdir/data' -m fast -w stop" >/dev/null 2>&1 || true
  rm -rf "$workdir"
}
trap stop EXIT

export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
echo "PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on port $port" >&2
"$@"
