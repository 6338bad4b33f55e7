#!/usr/bin/env python3
"""Seeds for tests/fuzz/corpus/<name>/ that are files, not harness output: small valid
and invalid examples written here byte by byte (a .deb, a wheel, an oci-archive, tar
layers, registry answers, ...) or copied from the repository (policies/, dockerfiles/,
examples/, tests/fixtures/). make_corpus.sh runs this, then asks each harness for the
seeds only it can make (IMGTOOL_FUZZ_WRITE_SEEDS). Deterministic: mtimes 0, fixed order.

    tests/fuzz/make_corpus.py CORPUS_DIR
"""
import base64
import gzip
import hashlib
import hmac
import io
import json
import lzma
import os
import re
import shutil
import struct
import sys
import tarfile
import zipfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = sys.argv[1]


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def copy(target, name, path):
    with open(os.path.join(ROOT, path), "rb") as f:
        put(target, name, f.read())


def tar_bytes(entries, fmt=tarfile.USTAR_FORMAT):
    """entries: (name, type, data_or_target, mode)"""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, kind, payload, mode in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            info.mode = mode
            if kind == "file":
                info.size = len(payload)
                t.addfile(info, io.BytesIO(payload))
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                t.addfile(info)
            elif kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = payload
                t.addfile(info)
            elif kind == "hardlink":
                info.type = tarfile.LNKTYPE
                info.linkname = payload
                t.addfile(info)
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
                t.addfile(info)
    return buf.getvalue()


def gz(data):
    return gzip.compress(data, mtime=0)


# ---- deb: ar of debian-binary, control.tar.*, data.tar.* ----
def ar(members):
    out = b"!<arch>\n"
    for name, data in members:
        hdr = "%-16s%-12s%-6s%-6s%-8s%-10s`\n" % (name, "0", "0", "0", "100644", len(data))
        out += hdr.encode() + data
        if len(data) % 2:
            out += b"\n"
    return out


CONTROL = (b"Package: fuzz-hello\nVersion: 1.0-1\nArchitecture: amd64\nMaintainer: Fuzz <fuzz@example.invalid>\n"
           b"Installed-Size: 4\nDescription: a package for the fuzzer\n a continuation line\n .\n the end\n")
DATA = [("./", "dir", None, 0o755), ("./usr/", "dir", None, 0o755), ("./usr/bin/", "dir", None, 0o755),
        ("./usr/bin/hello", "file", b"#!/bin/sh\necho hello\n", 0o755),
        ("./usr/bin/hi", "symlink", "hello", 0o777),
        ("./usr/bin/hello2", "hardlink", "./usr/bin/hello", 0o755),
        ("./etc/", "dir", None, 0o755), ("./etc/hello.conf", "file", b"greeting=hi\n", 0o644)]


def deb(data_member="data.tar.gz", data=None, control=CONTROL, extra_control=()):
    ctl = tar_bytes([("./", "dir", None, 0o755), ("./control", "file", control, 0o644)] + list(extra_control))
    data_tar = tar_bytes(DATA) if data is None else data
    packed = {"data.tar.gz": gz, "data.tar.xz": lzma.compress, "data.tar": lambda b: b}[data_member](data_tar)
    return ar([("debian-binary", b"2.0\n"), ("control.tar.gz", gz(ctl)), (data_member, packed)])


put("deb", "hello.deb", deb())
put("deb", "hello-xz.deb", deb("data.tar.xz"))
put("deb", "hello-plain.deb", deb("data.tar"))
put("deb", "conffiles.deb", deb(extra_control=[("./conffiles", "file", b"/etc/hello.conf\n", 0o644),
                                               ("./postinst", "file", b"#!/bin/sh\n", 0o755)]))
put("deb", "dotdot.deb", deb(data=tar_bytes([("./", "dir", None, 0o755), ("./../escape", "file", b"x", 0o644)])))
put("deb", "through-symlink.deb", deb(data=tar_bytes([("./", "dir", None, 0o755), ("./l", "symlink", "/etc", 0o777),
                                                      ("./l/passwd", "file", b"x", 0o644)])))
put("deb", "fifo.deb", deb(data=tar_bytes([("./", "dir", None, 0o755), ("./p", "fifo", None, 0o644)])))
put("deb", "stanza.txt", CONTROL)
put("deb", "no-data.deb", ar([("debian-binary", b"2.0\n")]))

# ---- wheel: zip with dist-info/METADATA, WHEEL, RECORD ----
def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel(files, lie=False):
    di = "fuzz_hello-1.0.dist-info"
    files = dict(files)
    files[di + "/METADATA"] = b"Metadata-Version: 2.1\nName: fuzz-hello\nVersion: 1.0\n\nA body.\n"
    files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    rows = []
    for name, data in files.items():
        h = record_hash(b"lie" if lie else data)
        rows.append('"%s",%s,%d' % (name, h, len(data)) if "," in name else "%s,%s,%d" % (name, h, len(data)))
    rows.append(di + "/RECORD,,")
    files[di + "/RECORD"] = ("\n".join(rows) + "\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100755 if name.endswith(".sh") else 0o100644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return buf.getvalue()


put("wheel", "hello.whl", wheel({"fuzz_hello/__init__.py": b"", "fuzz_hello/run.sh": b"#!/bin/sh\n",
                                 "fuzz_hello/a,b.txt": b"comma in a name\n"}))
put("wheel", "lying-record.whl", wheel({"fuzz_hello/__init__.py": b"x = 1\n"}, lie=True))
put("wheel", "dotdot.whl", wheel({"../escape.py": b"x"}))
put("wheel", "RECORD", b'pkg/a.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"pkg/b,c.py",,\n'
                      b"pkg/c.py,sha512=AAAA,1\n")

# ---- tar layers and oci-archives ----
put("layer", "gnu-longlink.tar", tar_bytes([("etc/", "dir", None, 0o755), ("etc/" + "x" * 150, "file", b"long\n", 0o644)],
                                           tarfile.GNU_FORMAT))
put("layer", "pax.tar.gz", gz(tar_bytes([("etc/passwd", "file", b"root:x:0:0::/root:/bin/sh\n", 0o644),
                                         ("usr/" + "y" * 200, "symlink", "../etc/passwd", 0o777)], tarfile.PAX_FORMAT)))
put("layer", "hardlink-missing.tar", tar_bytes([("a", "hardlink", "nowhere", 0o644)]))
put("layer", "truncated.tar.gz", gz(tar_bytes(DATA))[:200])

# imgtool unpack's writer (fuzz_unpack_layer): PAX headers a disk writer reads (xattrs,
# owners, nanosecond mtimes), gzip'ed, a sparse file, and two layers split by the
# harness's separator. The harness writes the GNU-tar seeds (test_tar.h) itself.
def pax_layer(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, payload, headers in entries:
            info = tarfile.TarInfo(name)
            info.mode, info.uid, info.gid, info.mtime = 0o644, 10001, 10002, 1700000000
            info.pax_headers = dict(headers, mtime="1700000000.123456789")
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                t.addfile(info)
            elif kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, payload
                t.addfile(info)
            else:
                info.size = len(payload)
                t.addfile(info, io.BytesIO(payload))
    return buf.getvalue()


XATTRS = pax_layer([("d", "dir", None, {"SCHILY.xattr.user.folder": "f"}),
                    ("d/f", "file", b"x", {"SCHILY.xattr.user.test": "value", "SCHILY.xattr.trusted.t": "t",
                                           "SCHILY.xattr.security.capability": "\x01"}),
                    ("d/l", "symlink", "/tmp/imgtool-fuzz-unpack-sentinel", {}),
                    ("d/l/through", "file", b"y", {"SCHILY.xattr.user.test": "v"})])
put("unpack_layer", "pax-xattrs.tar", XATTRS)
put("unpack_layer", "pax-xattrs.tar.gz", gz(XATTRS))
put("unpack_layer", "sparse-gnu.tar", tar_bytes([("s", "file", b"\0" * 4096 + b"end", 0o644)], tarfile.GNU_FORMAT))
put("unpack_layer", "two-layers.tar", pax_layer([("etc", "dir", None, {}), ("etc/a", "file", b"1", {})]) +
    b"IMGTOOL-NEXT-LAYER" + gz(pax_layer([("etc/.wh.a", "file", b"", {}), ("etc/.wh..wh..opq", "file", b"", {}),
                                          ("etc/b", "file", b"2", {"SCHILY.xattr.user.b": "b"})])))


def layout_archive(extra=(), prefix=""):
    config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}},
                        sort_keys=True, separators=(",", ":")).encode()
    cd = hashlib.sha256(config).hexdigest()
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                           "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                      "digest": "sha256:" + cd, "size": len(config)}, "layers": []},
                          sort_keys=True, separators=(",", ":")).encode()
    md = hashlib.sha256(manifest).hexdigest()
    index = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + md,
         "size": len(manifest), "annotations": {"org.opencontainers.image.ref.name": "v1"}}]},
        sort_keys=True, separators=(",", ":")).encode()
    layout = [("blobs/", "dir", None, 0o755), ("blobs/sha256/", "dir", None, 0o755),
              ("blobs/sha256/" + cd, "file", config, 0o644), ("blobs/sha256/" + md, "file", manifest, 0o644),
              ("index.json", "file", index, 0o644), ("oci-layout", "file", b'{"imageLayoutVersion":"1.0.0"}', 0o644)]
    return tar_bytes([(prefix + name, kind, data, mode) for name, kind, data, mode in layout] + list(extra))


put("oci_archive", "layout.tar", layout_archive())
put("oci_archive", "dotdot.tar", layout_archive([("../escape", "file", b"x", 0o644)]))
put("oci_archive", "symlink.tar", layout_archive([("blobs/sha256/link", "symlink", "/etc/passwd", 0o777)]))
put("oci_archive", "absolute.tar", tar_bytes([("/etc/x", "file", b"x", 0o644)]))
# Issue 25: what containerd's export and docker save (Docker 25 on) write: docker's files
# beside the layout (skipped), with and without "./" before every name; a legacy layer
# folder whose layer.tar is a symlink (refused).
DOCKER_FILES = [("manifest.json", "file", b'[{"Config":"blobs/sha256/x","RepoTags":["hello-world:latest"],"Layers":[]}]', 0o644),
                ("repositories", "file", b'{"hello-world":{"latest":"x"}}', 0o644)]
put("oci_archive", "docker-export.tar", layout_archive(DOCKER_FILES))
put("oci_archive", "docker-export-dot-prefixed.tar",
    layout_archive([("./" + n, k, d, m) for n, k, d, m in DOCKER_FILES], prefix="./"))
put("oci_archive", "docker-legacy-symlink.tar",
    layout_archive(DOCKER_FILES + [("0123abcd/", "dir", None, 0o755), ("0123abcd/json", "file", b"{}", 0o644),
                                   ("0123abcd/layer.tar", "symlink", "../blobs/sha256/x", 0o777)]))
for name in ("oras-hello-world.tar", "oras-hello-world-prefixed-path.tar"):  # containerd exports, as shipped
    copy("oci_archive", name, "tests/fixtures/realworld/oci/" + name)


# ---- docker_archive: docker save tarballs (whole ones; the harness writes manifest.json seeds) ----
def docker_save(extra=(), manifest=None, fmt=tarfile.USTAR_FORMAT):
    layer = tar_bytes([("f", "file", b"saved", 0o644)])
    diff = hashlib.sha256(layer).hexdigest()
    config = json.dumps({"architecture": "amd64", "os": "linux", "config": {},
                         "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff, "sha256:" + diff]}}).encode()
    cd = hashlib.sha256(config).hexdigest()
    if manifest is None:
        manifest = [{"Config": cd + ".json", "RepoTags": ["docker.io/foo/app:v1"],
                     "Layers": [diff + ".tar", "legacy/layer.tar"]}]
    return tar_bytes([(diff + ".tar", "file", layer, 0o644), (cd + ".json", "file", config, 0o644),
                      ("legacy/layer.tar", "symlink", "../" + diff + ".tar", 0o777),
                      ("manifest.json", "file", json.dumps(manifest).encode(), 0o644),
                      ("repositories", "file", b'{"docker.io/foo/app":{"v1":"%s"}}' % diff.encode(), 0o644)]
                     + list(extra), fmt)


put("docker_archive", "save.tar", docker_save())
put("docker_archive", "save-pax.tar", docker_save(fmt=tarfile.PAX_FORMAT))
put("docker_archive", "save.tar.gz", gz(docker_save()))
put("docker_archive", "dotdot.tar", docker_save([("../escape", "file", b"x", 0o644)]))
put("docker_archive", "link-out.tar", docker_save([("l", "symlink", "/etc/passwd", 0o777)]))
put("docker_archive", "hardlink.tar", docker_save([("h", "hardlink", "manifest.json", 0o644)]))
put("docker_archive", "legacy-only.tar", tar_bytes([("repositories", "file", b"{}", 0o644)]))

# ---- JSON documents from the repository ----
for name in ("spec.json", "spec-cpu.json", "spec-installed.json"):
    copy("spec", "golden-" + name, "examples/golden/" + name)
copy("spec", "small.json", "examples/small/spec.json")
put("spec", "packages.json", json.dumps({"base": "oci:/base@sha256:" + "a" * 64, "platform": "linux/arm64/v8",
    "compression": "zstd", "layers": [{"name": "debs", "debs": [{"src": "https://deb.test/x.deb", "sha256": "sha256:" + "b" * 64,
    "name": "x", "version": "1.0", "allow_setuid": True}], "wheels": [{"src": "w.whl", "sha256": "sha256:" + "c" * 64,
    "name": "w", "version": "2", "prefix": "usr/lib/python3/dist-packages"}]}], "workdir": "/app", "cmd": ["run"]}))
put("spec", "bad-owner.json", '{"base":"scratch","layers":[{"files":[{"src":"a","dest":"/a","owner":"x:1","mode":"9999"}]}]}')
put("spec", "truncated.json", '{"base": "scratch", "user": {')

copy("policy", "golden.json", "policies/golden.json")
for md in sorted(os.listdir(os.path.join(ROOT, "policies/rules"))):
    text = open(os.path.join(ROOT, "policies/rules", md)).read()
    for i, block in enumerate(re.findall(r"```json\n(.*?)```", text, re.S)):
        put("policy", "%s-%d.json" % (md[:-3], i), block)

# The attestations rule's conditions: CONDITIONS \0 PREDICATE (fuzz_conditions.cc).
PROVENANCE = {"buildDefinition": {"buildType": "https://imgtool.example/build/v1", "resolvedDependencies": [
    {"uri": "a", "digest": {"sha256": "aa"}}, {"uri": "git+https://x", "digest": {"sha1": "bb"}}]},
    "runDetails": {"builder": {"id": "https://ci.example/builder"}}}
SPDX = {"spdxVersion": "SPDX-2.3", "packages": [{"name": "zlib", "versionInfo": "1:1.2.13.dfsg-1"},
    {"name": "openssl", "versionInfo": "3.0.2-0ubuntu1.10"}, {"name": "x", "versionInfo": "sha256:ab"}]}
for name, conditions, predicate in [
        ("slsa.bin", [{"pointer": "/runDetails/builder/id", "equals": "https://ci.example/builder"},
                      {"pointer": "/buildDefinition/resolvedDependencies/*/digest/sha256", "present": True},
                      {"pointer": "/buildDefinition/buildType", "matches": "^https://imgtool\\.example/"}], PROVENANCE),
        ("sbom.bin", [{"pointer": "/packages", "none": [{"pointer": "/name", "equals": "openssl"},
                                                        {"pointer": "/versionInfo", "versionBelow": "3.0.11-1"}]},
                      {"pointer": "/packages", "every": [{"pointer": "/name", "oneOf": ["zlib", "openssl", "x"]},
                                                         {"pointer": "/license", "absent": True}]},
                      {"pointer": "/packages", "any": [{"pointer": "/versionInfo", "versionAtLeast": "1:0"}]}], SPDX),
        ("nested.bin", [{"pointer": "/a~1b/~0", "every": [{"pointer": "/*/*", "any": [
            {"pointer": "", "none": [{"pointer": "/x", "equals": [1, {"y": None}]}]}]}]}], {"a/b": {"~": [[[{"x": 1}], []]]}})]:
    put("conditions", name, json.dumps(conditions).encode() + b"\0" + json.dumps(predicate).encode())
put("conditions", "predicate-only.json", json.dumps(PROVENANCE))

for name in sorted(os.listdir(os.path.join(ROOT, "tests/fixtures/admission"))):
    copy("admission_review", name, "tests/fixtures/admission/" + name)

for name in sorted(os.listdir(os.path.join(ROOT, "dockerfiles"))):
    if name.endswith(".Dockerfile"):
        copy("dockerfile", name, "dockerfiles/" + name)
put("dockerfile", "heredoc.Dockerfile", "# syntax=docker/dockerfile:1\n# escape=\\\nARG BASE=debian@sha256:" + "a" * 64 +
    "\nFROM ${BASE} AS build\nRUN <<EOF\nset -e\necho hi\nEOF\nCOPY --from=build <<-'X' /etc/motd\n\thello\nX\n"
    "ADD --checksum=sha256:" + "b" * 64 + " https://example.invalid/a.tgz /a\nFROM build\nUSER 10001:10001\n")
put("dockerfile", "backtick.Dockerfile", "# escape=`\nFROM scratch\nRUN echo a `\n  # a comment inside\n  b\nUSER root\n")
# Issue 24: lines long enough to overflow a parser that recurses per character (std::regex
# did, from 30,000 to 50,000 characters), and the largest seed sets libFuzzer's default
# -max_len (the biggest seed, up to 1 MiB): 128 KiB, so inputs of 100,000 characters are
# tried.
put("dockerfile", "long-syntax.Dockerfile", "# syntax=docker/dockerfile:" + "1" * (131072 - 44) + "\nFROM scratch\nUSER 1\n")
put("dockerfile", "long-escape.Dockerfile", "# escape=" + "`" * 49152 + "\nFROM scratch\n")
put("dockerfile", "long-heredoc.Dockerfile", "FROM scratch\nRUN <<-'" + "E" * 32768 + "' sh\nFROM x\n\t" + "E" * 32768 +
    "\nUSER 1\n")
put("dockerfile", "long-continuation.Dockerfile", "FROM scratch\nRUN a \\\n" + "# c\\\n\\\n" * 4096 + "b\nUSER 1\n")
put("dockerfile", "deep-exec-form.Dockerfile", "FROM scratch\nADD [\"https://example.invalid/a\", " + "[" * 16384 +
    "]" * 16384 + ", \"/a\"]\nUSER 1\n")
# The harness's generator ("\0 N TEXT": \x01c is c repeated N * 1024 times, \x02cd the
# pair): the same shapes at 100 KiB from a few bytes each, for mutations to work on.
put("dockerfile", "gen-directives", "\0\x64# syntax=\x01a\n# escape=\x01`\nFROM scratch\nUSER 1\n")
put("dockerfile", "gen-heredoc", "\0\x64FROM scratch\nCOPY <<\"\x01E\" /a\nFROM x\n\x01E\nRUN <<-\x01F\n\t\x01F\nUSER 1\n")
put("dockerfile", "gen-exec-form", "\0\x64FROM scratch\nADD [\"http://a/b\", \x01[\x01], \"/d\"]\nUSER 1\n")
put("dockerfile", "gen-continuation", "\0\x64FROM scratch\nRUN a \\\n\x02\\\n\x02#\\\nb \x01\\\nUSER 1\n")

copy("fingerprint", "stack.json", "imgtool/fleet/testdata/stack.json")
copy("fingerprint", "golden.build.json", "imgtool/fleet/testdata/golden.build.json")
put("fingerprint", "fingerprint.json", json.dumps({"fields": {"image.digest": "sha256:" + "a" * 64, "nccl": "2.28.9",
    "cuda.runtime": "13.0", "env.NCCL_ALGO": "Tree", "lib.libnccl.so.2": "sha256:" + "b" * 64},
    "node": {"hostname": "n1", "gpu.uuid": "GPU-1"}, "timings": {"probe_ms": 12}}, sort_keys=True))
put("fingerprint", "build-output.json", json.dumps({"digest": "sha256:" + "c" * 64, "stack": {"cuda": "13.0.96"}}))

put("tf_config", "chief.json", '{"cluster": {"chief": ["10.0.0.1:2222"], "worker": ["10.0.0.2:2222", "[::1]:2223"]},'
    ' "task": {"type": "worker", "index": 1}}')
put("tf_config", "workers.json", '{"cluster": {"worker": ["a:1", "b:65535"]}, "task": {"type": "worker", "index": 0}}')
put("tf_config", "ps.json", '{"cluster": {"ps": ["a:1"], "worker": ["b:2"]}, "task": {"type": "ps", "index": 0}}')
put("tf_config", "hostport.txt", "[fe80::1%eth0]:2222")

put("json", "nested.json", '{"a":[1,-2,{"b":"\\u00e9\\n"}],"c":null,"d":true,"e":{"f":18446744073709551615}}')
put("json", "duplicate.json", '{"a":1,"a":2}')
put("json", "float.json", '[1.5e3, -0.0]')
put("json", "surrogates.json", '["\\ud83d\\ude00", "\\u0000"]')
put("manifest", "config.json", json.dumps({"architecture": "amd64", "os": "linux", "config": {"User": "10001",
    "Env": ["PATH=/bin"], "Entrypoint": ["/app"], "Labels": {"a": "b"}},
    "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "d" * 64]}}, sort_keys=True, separators=(",", ":")))
put("manifest", "docker-v2.json", json.dumps({"schemaVersion": 2,
    "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
    "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + "e" * 64, "size": 7},
    "layers": [{"mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip", "digest": "sha256:" + "f" * 64,
                "size": 9, "urls": ["https://example.invalid/l"]}]}))
put("manifest", "platform.txt", "linux/arm64/v8")

# Deep nesting (issue 24): documents one level past the JSON depth cap
# (oci/canonical_json.h kMaxJsonDepth, 128) and at it, as they are, and recipes
# (fuzz_util.h, ExpandNesting: 0x01, a 24-bit depth, then HEAD, OPEN, MIDDLE, CLOSE, TAIL
# split by 0x01) for the depth of the index report, 12,000, and 100,000, in a few bytes each.
JSON_DEPTH_CAP = 128


def recipe(depth, head, open_, middle, close, tail):
    return b"\x01" + depth.to_bytes(3, "big") + b"\x01".join(p.encode() for p in (head, open_, middle, close, tail))


DIFF_IDS = '"rootfs":{"type":"layers","diff_ids":[]}'
INDEX_HEAD = '{"schemaVersion":2,"manifests":[],"x":'
put("json", "deep-129-arrays.json", "[" * (JSON_DEPTH_CAP + 1) + "]" * (JSON_DEPTH_CAP + 1))
put("json", "deep-128-objects.json", '{"a":' * JSON_DEPTH_CAP + "1" + "}" * JSON_DEPTH_CAP)
put("json", "recipe-arrays-100000", recipe(100000, "", "[", "1", "]", ""))
put("json", "recipe-objects-12000", recipe(12000, "", '{"a":', "null", "}", ""))
put("json", "recipe-unclosed-100000", recipe(100000, "", "[", "", "", ""))
put("manifest", "deep-129-index.json", INDEX_HEAD + "[" * (JSON_DEPTH_CAP + 1) + "]" * (JSON_DEPTH_CAP + 1) + "}")
put("manifest", "recipe-index-12000", recipe(12000, INDEX_HEAD, "[", "", "]", "}"))
put("manifest", "recipe-config-100000", recipe(100000, '{"architecture":"amd64","os":"linux",' + DIFF_IDS + ',"x":',
                                               "[", "1", "]", "}"))
put("manifest", "recipe-mediatype-12000", recipe(12000, '{"schemaVersion":2,"manifests":[],"mediaType":', "[", "",
                                                 "]", "}"))
put("oci_node", "recipe-index-12000", recipe(12000, INDEX_HEAD, "[", "", "]", "}"))
put("oci_node", "recipe-manifest-100000", recipe(100000, '{"schemaVersion":2,"config":{"mediaType":'
                                                 '"application/vnd.oci.image.config.v1+json","digest":"sha256:' +
                                                 "0" * 64 + '","size":2},"layers":[],"annotations":{"a":"b"},"x":',
                                                 "[", "", "]", "}"))
put("tf_config", "recipe-12000", recipe(12000, '{"cluster":{"worker":["a:1"]},"task":{"type":"worker","index":0},'
                                        '"x":', '{"a":', "1", "}", "}"))
put("admission_review", "recipe-12000", recipe(12000, '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",'
                                               '"request":{"uid":"u","object":', '{"a":', "1", "}", "}}"))

put("registry_response", "errors.json", '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required",'
    '"detail":[{"Type":"repository","Name":"a/b","Action":"pull"}]},{"code":"DENIED"}]}')
put("registry_response", "tags.json", '{"name":"a/b","tags":["v1","latest",null,"v2"]}')
put("registry_response", "link.txt", '</v2/a/b/tags/list?last=v2&n=100>; rel="next"')
put("registry_response", "token.json", '{"token":"abc","access_token":"abc","expires_in":300}')
put("registry_response", "range.txt", "0-1048575")
put("registry_response", "location.txt", "/v2/a/b/blobs/uploads/5d7e?_state=abc")
put("www_authenticate", "bearer.txt", 'Bearer realm="https://auth.test/token",service="registry.test",'
    'scope="repository:a/b:pull,push",error="insufficient_scope"')
put("www_authenticate", "basic.txt", 'Basic realm="Registry Realm"')
put("www_authenticate", "escaped.txt", 'Bearer realm="a\\"b",service=unquoted, scope="x')

put("auth_file", "auths.json", json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": base64.b64encode(b"u:p").decode()},
    "registry.test:5000": {"auth": base64.b64encode(b"user:pass:word").decode()},
    "http://localhost/v2/": {"identitytoken": "refresh"}}}))
put("auth_file", "helpers.json", '{"credHelpers":{"registry.test:5000":"imgtooltest","docker.io":1},"credsStore":"pass","auths":{}}')
put("auth_file", "bad-base64.json", '{"auths":{"localhost":{"auth":"!!!"}}}')

for i, text in enumerate(["docker://nginx", "docker://registry.test:5000/team/app:v1@sha256:" + "a" * 64,
                          "oci:/tmp/layout:tag", "oci-archive:out.tar@sha256:" + "b" * 64, "docker://[::1]:5000/a/b",
                          "docker://index.docker.io/library/ubuntu:22.04", "nginx:latest"]):
    put("reference", "ref-%d.txt" % i, text)


# ---- binary formats ----
def store_req(op, key, value=None):
    out = bytes([op]) + struct.pack("<I", len(key)) + key
    if value is not None:
        out += struct.pack("<I", len(value)) + value
    return out


put("store_request", "set-get.bin", store_req(1, b"arrive/0", b"10.0.0.1:2222") + store_req(2, b"arrive/0") +
    store_req(3, b"verdict"))
put("store_request", "wait.bin", bytes([4]) + struct.pack("<I", 2) + struct.pack("<I", 2) + b"fp" +
    struct.pack("<I", 7) + b"verdict" + struct.pack("<I", 100))
put("store_request", "huge-length.bin", bytes([1]) + struct.pack("<I", 0xFFFFFFFF))
put("store_request", "unknown-op.bin", bytes([9, 0, 0, 0, 0]))


# The handshake (trainer/cluster/tcp_store.h): HELLO, then CLAIM rank 1 with a proof
# under fuzz_store_request.cc's token for a server nonce of zeros (store_auth.cc's
# ClaimMessage), then requests the token store lets through only after a valid claim.
def claim(rank, who, nonce, proof):
    return (bytes([6]) + struct.pack("<I", rank) + struct.pack("<I", len(who)) + who + nonce +
            struct.pack("<I", len(proof)) + proof)


def claim_proof(rank, who, nonce, secret=b"fuzz-store-token-0123456789"):
    message = (b"imgtool rendezvous store v1: claim\0" + bytes(32) + nonce + struct.pack("<I", rank) +
               struct.pack("<I", len(who)) + who)
    return hmac.new(secret, message, hashlib.sha256).digest()


WHO, NONCE = b"pid 12 on node-a", b"c" * 32
put("store_request", "handshake.bin", bytes([5]) + claim(1, WHO, NONCE, claim_proof(1, WHO, NONCE)) +
    store_req(1, b"fp/1", b"sha256:" + b"a" * 64) + store_req(2, b"fp/0") +
    bytes([4]) + struct.pack("<I", 1) + struct.pack("<I", 7) + b"verdict" + struct.pack("<I", 100))
put("store_request", "claim-no-proof.bin", bytes([5]) + claim(1, WHO, NONCE, b"") + store_req(1, b"fp/1", b"x"))
put("store_request", "claim-wrong-proof.bin", bytes([5]) + claim(2, WHO, NONCE, claim_proof(1, WHO, NONCE)) +
    store_req(3, b"fpfull/sha256:" + b"b" * 64))


def idx(dims, fill=0):
    n = 1
    for d in dims:
        n *= d
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + bytes([fill]) * n


put("idx", "images.idx", idx([2, 4, 4], 7))
put("idx", "labels.idx", idx([5], 3))
put("idx", "truncated.idx", idx([2, 28, 28])[:100])
put("idx", "floats.idx", bytes([0, 0, 0x0D, 1, 0, 0, 0, 1]) + b"\0\0\0\0")

# /etc/passwd and /etc/group as distributions ship them and as issue 24 crafted them.
put("users", "alpine-passwd", b'root:x:0:0:root:/root:/bin/sh\nbin:x:1:1:bin:/bin:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n')
put("users", "comments", b'# users\n\n  \t\n#t:x:0:0:::\nt:x:10001:10001:::\n')
put("users", "crlf", b'root:x:0:0:root:/root:/bin/sh\r\nt:x:0:0\r\nt:x:10001:10001::/home/t:/bin/sh\r\n')
put("users", "debian-group", b'root:x:0:\ndaemon:x:1:\nadm:x:4:\nsudo:x:27:\nusers:x:100:\nnogroup:x:65534:\ntrainer:x:10001:a,b\n')
put("users", "debian-passwd", b'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nbin:x:2:2:bin:/bin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n_apt:x:42:65534::/nonexistent:/usr/sbin/nologin\n')
put("users", "fields", b't:x:10001:10001\nt:x:10001:10001:::/bin/sh:extra\nu:x:5\nv\n::0:0:::\n')
put("users", "go-only-name", b'root:x:0:0:::\nt\nt:x:10001:10001:::\n')
put("users", "imgtool-built", b'root:x:0:0:root:/root:/sbin/nologin\ntrainer:x:10001:10001::/home/trainer:/sbin/nologin\n')
put("users", "issue24-blank", b' t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n')
put("users", "nis", b'root:x:0:0:::\n+::::::\n-bad\n+@netgroup\n')
put("users", "no-newline", b'root:x:0:0:::\nt:x:10001:10001:::')
put("users", "numbers", b'a:x:+0:1:::\nb:x: 0:1:::\nc:x:0000:1:::\nd:x:4294967296:1:::\ne:x:-1:1:::\nf:x::1:::\ng:x:-18446744073709551615:1:::\nh:x:99999999999999999999:1:::\n')
put("users", "unicode-space", b'\xc2\xa0t:x:0:0:::\n\xe3\x80\x80u:x:0:0:::\nt:x:10001:10001::: \xc2\x85\n')
put("users", "user-arg", b'4294967296:10001\nroot:x:0:0:::\n')
