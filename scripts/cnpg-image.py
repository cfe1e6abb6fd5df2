#!/usr/bin/env python3
"""Writes pgprompt's CloudNativePG image-volume extension image, without a container
engine: an OCI image layout (oci-layout, index.json, blobs/sha256/…) holding one layer
with the extension's files where CloudNativePG mounts them from (docs/cloudnativepg.md):

    /lib/pgprompt.so
    /share/extension/pgprompt.control, pgprompt--*.sql

CloudNativePG (1.27+, PostgreSQL 18) mounts the image at /extensions/pgprompt and adds
/extensions/pgprompt/share to extension_control_path and /extensions/pgprompt/lib to
dynamic_library_path. The image is built from the PostgreSQL 18 tarball
(scripts/package.sh), byte for byte the same on every run (fixed times, sorted entries),
and written as a directory and as a tar of it, which `skopeo copy
oci-archive:FILE docker://REGISTRY/pgprompt-extension:TAG` pushes.

    scripts/cnpg-image.py TARBALL OUT_DIR      # prints the OCI archive's path
"""
import gzip
import hashlib
import io
import json
import pathlib
import sys
import tarfile

EPOCH = 1767225600  # 2026-01-01T00:00:00Z: every file's time, so the image is reproducible


def blob(store: pathlib.Path, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    (store / digest).write_bytes(data)
    return f"sha256:{digest}"


def layer(tarball: pathlib.Path) -> bytes:
    """The extension's files from the package tarball, at lib/ and share/extension/."""
    out = io.BytesIO()
    with tarfile.open(tarball) as src, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
        members = sorted((m for m in src.getmembers() if m.isfile()), key=lambda m: m.name)
        dirs = set()
        for m in members:
            parts = pathlib.PurePosixPath(m.name).parts
            if "lib" in parts:
                rel = pathlib.PurePosixPath("lib", *parts[parts.index("lib") + 1:])
            elif "share" in parts:
                rel = pathlib.PurePosixPath("share", *parts[parts.index("share") + 1:])
            else:
                continue  # install.sh
            for parent in reversed(rel.parents[:-1]):
                if str(parent) not in dirs:
                    dirs.add(str(parent))
                    d = tarfile.TarInfo(str(parent))
                    d.type, d.mode, d.mtime = tarfile.DIRTYPE, 0o755, EPOCH
                    dst.addfile(d)
            info = tarfile.TarInfo(str(rel))
            data = src.extractfile(m).read()
            info.size, info.mode, info.mtime = len(data), 0o755 if rel.suffix == ".so" else 0o644, EPOCH
            dst.addfile(info, io.BytesIO(data))
    return out.getvalue()


def main(tarball: str, out_dir: str) -> None:
    tarball_path = pathlib.Path(tarball)
    name = tarball_path.name.removesuffix(".tar.gz")  # pgprompt-VERSION-pg18-linux-x86_64
    version, major = name.split("-")[1], name.split("-")[2]
    tag = f"{version}-{major}"
    root = pathlib.Path(out_dir) / f"pgprompt-extension-{tag}"
    store = root / "blobs" / "sha256"
    store.mkdir(parents=True, exist_ok=True)
    raw = layer(tarball_path)
    compressed = gzip.compress(raw, mtime=0)
    layer_digest = blob(store, compressed)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "2026-01-01T00:00:00Z",
        "config": {"Labels": {"org.opencontainers.image.title": "pgprompt",
                              "org.opencontainers.image.version": version,
                              "io.cloudnative-pg.extension.name": "pgprompt",
                              "io.cloudnative-pg.extension.postgresql-major": major.removeprefix("pg")}},
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{hashlib.sha256(raw).hexdigest()}"]},
    }
    config_bytes = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
    config_digest = blob(store, config_bytes)
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": len(config_bytes)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest,
                    "size": len(compressed)}],
        "annotations": {"org.opencontainers.image.version": version},
    }
    manifest_bytes = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    manifest_digest = blob(store, manifest_bytes)
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest,
                       "size": len(manifest_bytes), "platform": {"architecture": "amd64", "os": "linux"},
                       "annotations": {"org.opencontainers.image.ref.name": tag}}],
    }
    (root / "index.json").write_text(json.dumps(index, sort_keys=True, separators=(",", ":")))
    (root / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    archive = pathlib.Path(out_dir) / f"pgprompt-extension-{tag}.oci.tar"
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as t:
        for p in sorted(root.rglob("*")):
            info = t.gettarinfo(str(p), str(p.relative_to(root)))
            info.mtime, info.uid, info.gid, info.uname, info.gname = EPOCH, 0, 0, "", ""
            if p.is_file():
                with open(p, "rb") as f:
                    t.addfile(info, f)
            else:
                t.addfile(info)
    print(archive)


if __name__ == "__main__":
    main(*sys.argv[1:3])
