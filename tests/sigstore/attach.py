#!/usr/bin/env python3
"""Stores keyless signatures of an image in an OCI layout the way cosign does, for the
tests (imgtool verifies keyless signatures; it does not make them):

  attach.py legacy LAYOUT sha256:IMAGE PAYLOAD LEGACY_DIR
      one layer of the signature image at tag sha256-<hex>.sig: the simple-signing
      payload, with cosign's annotations read from LEGACY_DIR (instance.py sign
      --legacy-dir): signature, certificate.pem, chain.pem, rekor-bundle.json,
      rfc3161-timestamp.json when present. Appends to an existing .sig image.
  attach.py bundle LAYOUT sha256:IMAGE BUNDLE
      a Sigstore bundle as an OCI 1.1 artifact whose subject is the image, listed in the
      referrers tag schema's index at tag sha256-<hex> (created or extended).
  attach.py payload REF sha256:IMAGE
      prints cosign's simple-signing payload naming REF and the digest.

Only the layout's own files are written (blobs, index.json), each blob by its sha256.
"""
import hashlib
import json
import os
import sys

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
EMPTY_CONFIG = "application/vnd.oci.empty.v1+json"
REF_NAME = "org.opencontainers.image.ref.name"


def put_blob(layout, data):
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.join(layout, "blobs", "sha256", digest)
    if not os.path.exists(path):
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.rename(path + ".tmp", path)
    return "sha256:" + digest, len(data)


def canonical(obj):
    return json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()


def read_index(layout):
    with open(os.path.join(layout, "index.json")) as f:
        return json.load(f)


def write_index(layout, index):
    path = os.path.join(layout, "index.json")
    with open(path + ".tmp", "w") as f:
        json.dump(index, f, separators=(",", ":"))
    os.rename(path + ".tmp", path)


def tagged(index, tag):
    for m in index["manifests"]:
        if m.get("annotations", {}).get(REF_NAME) == tag:
            return m
    return None


def set_tag(layout, tag, descriptor):
    index = read_index(layout)
    index["manifests"] = [m for m in index["manifests"] if m.get("annotations", {}).get(REF_NAME) != tag]
    descriptor = dict(descriptor, annotations={REF_NAME: tag})
    index["manifests"].append(descriptor)
    write_index(layout, index)


def blob(layout, digest):
    with open(os.path.join(layout, "blobs", "sha256", digest.split(":")[1]), "rb") as f:
        return f.read()


def legacy(layout, image, payload_path, legacy_dir):
    with open(payload_path, "rb") as f:
        payload = f.read()
    def text(name):
        p = os.path.join(legacy_dir, name)
        return open(p).read() if os.path.exists(p) else None
    annotations = {"dev.cosignproject.cosign/signature": text("signature").strip(),
                   "dev.sigstore.cosign/certificate": text("certificate.pem"),
                   "dev.sigstore.cosign/chain": text("chain.pem"),
                   "dev.sigstore.cosign/bundle": text("rekor-bundle.json")}
    if text("rfc3161-timestamp.json"):
        annotations["dev.sigstore.cosign/rfc3161timestamp"] = text("rfc3161-timestamp.json")
    annotations = {k: v for k, v in annotations.items() if v is not None}
    digest, size = put_blob(layout, payload)
    layer = {"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json", "digest": digest, "size": size,
             "annotations": annotations}
    tag = "sha256-" + image.split(":")[1] + ".sig"
    existing = tagged(read_index(layout), tag)
    layers = json.loads(blob(layout, existing["digest"]))["layers"] if existing else []
    layers.append(layer)
    config = {"architecture": "", "config": {}, "created": "0001-01-01T00:00:00Z", "os": "",
              "rootfs": {"type": "layers", "diff_ids": [l["digest"] for l in layers]}}
    cdigest, csize = put_blob(layout, canonical(config))
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cdigest, "size": csize},
                "layers": layers}
    mdigest, msize = put_blob(layout, canonical(manifest))
    set_tag(layout, tag, {"mediaType": OCI_MANIFEST, "digest": mdigest, "size": msize})


def bundle(layout, image, bundle_path, image_media_type=OCI_MANIFEST):
    with open(bundle_path, "rb") as f:
        data = f.read()
    subject_bytes = blob(layout, image)
    edigest, esize = put_blob(layout, b"{}")
    ldigest, lsize = put_blob(layout, data)
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": BUNDLE_TYPE,
                "config": {"mediaType": EMPTY_CONFIG, "digest": edigest, "size": esize},
                "layers": [{"mediaType": BUNDLE_TYPE, "digest": ldigest, "size": lsize}],
                "subject": {"mediaType": json.loads(subject_bytes).get("mediaType", image_media_type),
                            "digest": image, "size": len(subject_bytes)}}
    mdigest, msize = put_blob(layout, canonical(manifest))
    tag = "sha256-" + image.split(":")[1]
    existing = tagged(read_index(layout), tag)
    entries = json.loads(blob(layout, existing["digest"]))["manifests"] if existing else []
    entries.append({"mediaType": OCI_MANIFEST, "digest": mdigest, "size": msize, "artifactType": BUNDLE_TYPE})
    referrers = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}
    idigest, isize = put_blob(layout, canonical(referrers))
    set_tag(layout, tag, {"mediaType": OCI_INDEX, "digest": idigest, "size": isize})


def payload(ref, image):
    body = {"critical": {"identity": {"docker-reference": ref}, "image": {"docker-manifest-digest": image},
                         "type": "cosign container image signature"}, "optional": None}
    sys.stdout.write(json.dumps(body, separators=(",", ":")))


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) == 6 and argv[1] == "legacy":
        legacy(*argv[2:])
    elif len(argv) == 5 and argv[1] == "bundle":
        bundle(*argv[2:])
    elif len(argv) == 4 and argv[1] == "payload":
        payload(*argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
