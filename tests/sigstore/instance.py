#!/usr/bin/env python3
"""A private Sigstore instance for tests: a Fulcio-like CA, a CT log, a Rekor v1 log and an
RFC 3161 timestamp authority, all made here, and keyless bundles signed with them.

  instance.py init DIR [--name test] [--seed TEXT]
      Makes the instance in DIR: its keys (DIR/keys/), certificates (DIR/certs/),
      DIR/trusted_root.json (for `imgtool verify-blob --trusted-root`) and
      DIR/trust_config.json (for `python -m sigstore --trust-config ... verify identity
      --offline`). Two inits (without the same --seed) never share a key.

  instance.py sign DIR --identity ID --issuer URL (--artifact FILE | --digest sha256:HEX)
                   --out BUNDLE [--dsse [--predicate-type URI]] [--time UNIX] ...
      Issues a short-lived leaf certificate to ID (with an embedded SCT), signs the artifact
      (or an in-toto statement about it, in a DSSE envelope), logs it in the instance's Rekor
      (signed entry timestamp, inclusion proof, signed checkpoint), optionally timestamps
      the signature at the TSA, and writes a v0.3 bundle. --legacy-dir also writes what
      cosign stores for a legacy image signature.

  instance.py trust-config DIR [--out FILE]
      (Re)writes the ClientTrustConfig for sigstore-python (default DIR/trust_config.json).

Everything is made with the `cryptography` package; the RFC 3161 response and the DER it
needs are encoded here by hand (so the timestamp can carry any genTime). Keys come from
--seed when given (reproducible instances), else from the OS's random source. ECDSA
signatures are randomized either way.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import hashlib
import json
import os
import struct
import sys
import time
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils as asym_utils
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

TRUSTED_ROOT_TYPE = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
SIGNING_CONFIG_TYPE = "application/vnd.dev.sigstore.signingconfig.v0.2+json"
CLIENT_TRUST_CONFIG_TYPE = "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json"
BUNDLE_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
INTOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
INTOTO_STATEMENT_V1 = "https://in-toto.io/Statement/v1"
DEFAULT_PREDICATE = "https://sigstore.dev/cosign/sign/v1"

OID_ISSUER_V1 = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")  # raw bytes (deprecated)
OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")  # DER UTF8String
OID_SCT_LIST = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")

# The instance's trust starts here (trusted_root validFor, CA notBefore): signing times
# given with --time may go back this far.
EPOCH = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
CA_NOT_AFTER = dt.datetime(2045, 1, 1, tzinfo=dt.timezone.utc)
TREE_ID = 1193046  # Rekor v1 checkpoints name their tree: "<host> - <tree id>"
LOG_INDEX_OFFSET = 4000000  # global logIndex = offset + index in the tree (as a sharded Rekor)
DUMMY_LEAVES_BEFORE = 6  # the tree: 6 other entries, this one, 2 more (size 9: a real audit path)
DUMMY_LEAVES_AFTER = 2


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def canonical_json(obj) -> bytes:
    """RFC 8785 for what we write (ASCII keys, strings and integers only)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def rfc3339(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc(unix: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(unix, tz=dt.timezone.utc)


# --- keys -------------------------------------------------------------------------------


class KeySource:
    """Private keys from a seed (reproducible) or the OS (fresh)."""

    def __init__(self, seed: str | None):
        self.seed = seed

    def key(self, label: str, curve: ec.EllipticCurve) -> ec.EllipticCurvePrivateKey:
        if self.seed is None:
            return ec.generate_private_key(curve)
        order = {"secp256r1": 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551,
                 "secp384r1": int("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF"
                                  "581A0DB248B0A77AECEC196ACCC52973", 16)}[curve.name]
        material = hashlib.sha512(f"imgtool-test-instance\0{self.seed}\0{label}".encode()).digest()
        return ec.derive_private_key(int.from_bytes(material, "big") % (order - 1) + 1, curve)


def spki_der(key) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def save_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    return serialization.load_pem_private_key(path.read_bytes(), password=None)


def load_cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def serial_from(*parts) -> int:
    """A positive serial of at most 16 bytes, fixed by what it is derived from."""
    h = hashlib.sha256("\0".join(str(p) for p in parts).encode()).digest()[:16]
    return int.from_bytes(h, "big") >> 1 or 1


def ecdsa_sign(key: ec.EllipticCurvePrivateKey, data: bytes, hash_alg=None) -> bytes:
    return key.sign(data, ec.ECDSA(hash_alg or hashes.SHA256()))


# --- certificates ------------------------------------------------------------------------


def ca_cert(subject: x509.Name, key, issuer_cert, issuer_key, serial: int, path_len: int | None,
            not_before: dt.datetime, not_after: dt.datetime, hash_alg, eku=None) -> x509.Certificate:
    """A CA certificate (self-signed when issuer_cert is None)."""
    issuer_name = subject if issuer_cert is None else issuer_cert.subject
    aki_key = key.public_key() if issuer_cert is None else issuer_cert.public_key()
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name)
         .public_key(key.public_key()).serial_number(serial)
         .not_valid_before(not_before).not_valid_after(not_after)
         .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                      data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                      crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
         .add_extension(x509.BasicConstraints(ca=True, path_length=path_len), critical=True)
         .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(aki_key), critical=False))
    if eku is not None:
        b = b.add_extension(x509.ExtendedKeyUsage(eku), critical=False)
    return b.sign(issuer_key or key, hash_alg)


def name(org: str, cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, org), x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def der_len(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    out = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(out)]) + out


def tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + der_len(len(content)) + content


def sct_entry(ct_key, tbs: bytes, issuer_spki: bytes, when_ms: int) -> bytes:
    """One RFC 6962 SCT (v1, precert entry) over a TBSCertificate without the SCT list."""
    log_id = hashlib.sha256(spki_der(ct_key.public_key())).digest()
    extensions = b""
    signed = (struct.pack("!BBQH", 0, 0, when_ms, 1) + hashlib.sha256(issuer_spki).digest()
              + len(tbs).to_bytes(3, "big") + tbs + struct.pack("!H", len(extensions)) + extensions)
    sig = ecdsa_sign(ct_key, signed)
    return (struct.pack("!B", 0) + log_id + struct.pack("!Q", when_ms) + struct.pack("!H", len(extensions))
            + extensions + struct.pack("!BBH", 4, 3, len(sig)) + sig)


def leaf_cert(inst: "Instance", leaf_key, identity: str, issuer: str, not_before: int, validity: int,
              sct_time: int) -> x509.Certificate:
    """Fulcio's leaf: empty subject, one identity SAN (critical), the OIDC issuer, an SCT."""
    inter, inter_key = inst.fulcio_intermediate, inst.fulcio_intermediate_key
    san = x509.UniformResourceIdentifier(identity) if "://" in identity else x509.RFC822Name(identity)
    issuer_raw = issuer.encode()
    b = (x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(inter.subject)
         .public_key(leaf_key.public_key())
         .serial_number(serial_from(inst.seed_tag, "leaf", identity, issuer, not_before, b64(spki_der(leaf_key.public_key()))))
         .not_valid_before(utc(not_before)).not_valid_after(utc(not_before + validity))
         .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                      data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                      crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
         .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
         .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
         .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_key.public_key()), critical=False)
         .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(
             inter.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value), critical=False)
         .add_extension(x509.SubjectAlternativeName([san]), critical=True)
         .add_extension(x509.UnrecognizedExtension(OID_ISSUER_V1, issuer_raw), critical=False)
         .add_extension(x509.UnrecognizedExtension(OID_ISSUER_V2, tlv(0x0C, issuer_raw)), critical=False))
    # The precertificate's TBS: the same certificate without the SCT list (which comes last).
    tbs = b.sign(inter_key, hashes.SHA384()).tbs_certificate_bytes
    sct = sct_entry(inst.ct_key, tbs, spki_der(inter.public_key()), sct_time * 1000)
    sct_list = struct.pack("!H", len(sct) + 2) + struct.pack("!H", len(sct)) + sct
    b = b.add_extension(x509.UnrecognizedExtension(OID_SCT_LIST, tlv(0x04, sct_list)), critical=False)
    return b.sign(inter_key, hashes.SHA384())


# --- RFC 6962 Merkle tree, checkpoints ---------------------------------------------------


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split_point(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def tree_root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = split_point(len(leaves))
    return node_hash(tree_root(leaves[:k]), tree_root(leaves[k:]))


def audit_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """RFC 6962 2.1.1 PATH(m, D[n]) over leaf hashes, leaf to root."""
    if len(leaves) == 1:
        return []
    k = split_point(len(leaves))
    if m < k:
        return audit_path(m, leaves[:k]) + [tree_root(leaves[k:])]
    return audit_path(m - k, leaves[k:]) + [tree_root(leaves[:k])]


# --- DER for RFC 3161 --------------------------------------------------------------------


def der_int(n: int) -> bytes:
    raw = n.to_bytes(n.bit_length() // 8 + 1, "big", signed=True) if n else b"\x00"
    return tlv(0x02, raw)


def der_oid(dotted: str) -> bytes:
    parts = [int(p) for p in dotted.split(".")]
    out = bytearray([parts[0] * 40 + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.append(0x80 | (p & 0x7F))
            p >>= 7
        out += bytes(reversed(chunk))
    return tlv(0x06, bytes(out))


def seq(*items: bytes) -> bytes:
    return tlv(0x30, b"".join(items))


def der_set(*items: bytes) -> bytes:
    return tlv(0x31, b"".join(sorted(items)))  # DER: SET OF sorted by encoding


def octets(data: bytes) -> bytes:
    return tlv(0x04, data)


def explicit(n: int, content: bytes) -> bytes:
    return tlv(0xA0 + n, content)


OID_SHA256 = "2.16.840.1.101.3.4.2.1"
OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
OID_TSTINFO = "1.2.840.113549.1.9.16.1.4"
OID_CONTENT_TYPE = "1.2.840.113549.1.9.3"
OID_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
OID_SIGNING_TIME = "1.2.840.113549.1.9.5"
OID_SIGNING_CERT_V2 = "1.2.840.113549.1.9.16.2.47"
OID_ECDSA_SHA256 = "1.2.840.10045.4.3.2"
TSA_POLICY = "1.3.6.1.4.1.57264.2"  # any policy OID; verifiers here ask for none


def timestamp_response(inst: "Instance", signature: bytes, gen_time: int, serial: int) -> bytes:
    """A granted TimeStampResp (RFC 3161) for sha256(signature), genTime as given."""
    sha256_alg = seq(der_oid(OID_SHA256))
    when = tlv(0x18, utc(gen_time).strftime("%Y%m%d%H%M%SZ").encode())
    tst_info = seq(der_int(1), der_oid(TSA_POLICY), seq(sha256_alg, octets(hashlib.sha256(signature).digest())),
                   der_int(serial), when)
    leaf = inst.tsa_cert
    leaf_der = leaf.public_bytes(serialization.Encoding.DER)
    issuer_der = leaf.issuer.public_bytes()
    # ESS signingCertificateV2: the TSA certificate's sha256 (default algorithm, omitted)
    # and its issuer and serial (issuer as GeneralNames with one directoryName).
    issuer_serial = seq(seq(explicit(4, issuer_der)), der_int(leaf.serial_number))
    ess = seq(seq(seq(octets(hashlib.sha256(leaf_der).digest()), issuer_serial)))
    attrs = [
        seq(der_oid(OID_CONTENT_TYPE), der_set(der_oid(OID_TSTINFO))),
        seq(der_oid(OID_SIGNING_TIME), der_set(tlv(0x17, utc(gen_time).strftime("%y%m%d%H%M%SZ").encode()))),
        seq(der_oid(OID_MESSAGE_DIGEST), der_set(octets(hashlib.sha256(tst_info).digest()))),
        seq(der_oid(OID_SIGNING_CERT_V2), der_set(ess)),
    ]
    signed_attrs = der_set(*attrs)  # signed as a SET (tag 0x31), stored as [0] IMPLICIT
    sig = ecdsa_sign(inst.tsa_key, signed_attrs)
    signer_info = seq(der_int(1), seq(issuer_der, der_int(leaf.serial_number)), sha256_alg,
                      b"\xa0" + signed_attrs[1:], seq(der_oid(OID_ECDSA_SHA256)), octets(sig))
    signed_data = seq(der_int(3), der_set(sha256_alg), seq(der_oid(OID_TSTINFO), explicit(0, octets(tst_info))),
                      b"\xa0" + der_len(len(leaf_der)) + leaf_der, der_set(signer_info))
    token = seq(der_oid(OID_SIGNED_DATA), explicit(0, signed_data))
    return seq(seq(der_int(0)), token)


# --- the instance ------------------------------------------------------------------------


class Instance:
    def __init__(self, root: Path):
        self.dir = root
        meta = json.loads((root / "instance.json").read_text())
        self.name = meta["name"]
        self.seed_tag = meta["seed_tag"]
        self.rekor_host = meta["rekor_host"]
        k, c = root / "keys", root / "certs"
        self.fulcio_root = load_cert(c / "fulcio_root.pem")
        self.fulcio_intermediate = load_cert(c / "fulcio_intermediate.pem")
        self.fulcio_intermediate_key = load_key(k / "fulcio_intermediate.pem")
        self.ct_key = load_key(k / "ctlog.pem")
        self.rekor_key = load_key(k / "rekor.pem")
        self.tsa_root = load_cert(c / "tsa_root.pem")
        self.tsa_cert = load_cert(c / "tsa.pem")
        self.tsa_key = load_key(k / "tsa.pem")

    @property
    def rekor_log_id(self) -> bytes:
        return hashlib.sha256(spki_der(self.rekor_key.public_key())).digest()


def log_key_entry(base_url: str, key) -> dict:
    der = spki_der(key.public_key())
    return {
        "baseUrl": base_url,
        "hashAlgorithm": "SHA2_256",
        "publicKey": {"rawBytes": b64(der), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                      "validFor": {"start": rfc3339(EPOCH)}},
        "logId": {"keyId": b64(hashlib.sha256(der).digest())},
    }


def chain_entry(uri: str, org: str, certs: list[x509.Certificate]) -> dict:
    return {
        "subject": {"organization": org, "commonName": certs[0].subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value},
        "uri": uri,
        "certChain": {"certificates": [{"rawBytes": b64(c.public_bytes(serialization.Encoding.DER))} for c in certs]},
        "validFor": {"start": rfc3339(EPOCH)},
    }


def write_trusted_root(inst: Instance) -> dict:
    n = inst.name
    root = {
        "mediaType": TRUSTED_ROOT_TYPE,
        "tlogs": [log_key_entry(f"https://{inst.rekor_host}", inst.rekor_key)],
        "certificateAuthorities": [chain_entry(f"https://fulcio.{n}", f"{n} fulcio",
                                               [inst.fulcio_intermediate, inst.fulcio_root])],
        "ctlogs": [log_key_entry(f"https://ctfe.{n}/{n}", inst.ct_key)],
        "timestampAuthorities": [chain_entry(f"https://tsa.{n}/api/v1/timestamp", f"{n} tsa",
                                             [inst.tsa_cert, inst.tsa_root])],
    }
    (inst.dir / "trusted_root.json").write_text(json.dumps(root, indent=2) + "\n")
    return root


def write_trust_config(inst: Instance, out: Path) -> None:
    """sigstore-python's --trust-config: the trusted root and a signing config naming the
    instance's services (verification reads only the trusted root, but both must parse)."""
    root = json.loads((inst.dir / "trusted_root.json").read_text())
    start = {"start": rfc3339(EPOCH)}
    service = lambda url: {"url": url, "majorApiVersion": 1, "validFor": start, "operator": inst.name}
    config = {
        "mediaType": CLIENT_TRUST_CONFIG_TYPE,
        "trustedRoot": root,
        "signingConfig": {
            "mediaType": SIGNING_CONFIG_TYPE,
            "caUrls": [service(f"https://fulcio.{inst.name}")],
            "oidcUrls": [service(f"https://oauth2.{inst.name}/auth")],
            "rekorTlogUrls": [service(f"https://{inst.rekor_host}")],
            "tsaUrls": [service(f"https://tsa.{inst.name}/api/v1/timestamp")],
            "rekorTlogConfig": {"selector": "ANY"},
            "tsaConfig": {"selector": "ANY"},
        },
    }
    out.write_text(json.dumps(config, indent=2) + "\n")


def cmd_init(args) -> int:
    d = Path(args.dir)
    if (d / "instance.json").exists() and not args.force:
        print(f"instance.py: {d} already holds an instance (use --force to replace it)", file=sys.stderr)
        return 2
    (d / "keys").mkdir(parents=True, exist_ok=True)
    (d / "certs").mkdir(exist_ok=True)
    seed_tag = args.seed if args.seed is not None else os.urandom(16).hex()
    src = KeySource(args.seed)
    n = args.name
    keys = {
        "fulcio_root": src.key("fulcio-root", ec.SECP384R1()),
        "fulcio_intermediate": src.key("fulcio-intermediate", ec.SECP384R1()),
        "ctlog": src.key("ctlog", ec.SECP256R1()),
        "rekor": src.key("rekor", ec.SECP256R1()),
        "tsa_root": src.key("tsa-root", ec.SECP256R1()),
        "tsa": src.key("tsa", ec.SECP256R1()),
    }
    for label, key in keys.items():
        save_key(d / "keys" / f"{label}.pem", key)
    froot = ca_cert(name(f"{n} fulcio", f"{n}-fulcio-root"), keys["fulcio_root"], None, None,
                    serial_from(seed_tag, "fulcio-root"), 1, EPOCH, CA_NOT_AFTER, hashes.SHA384())
    finter = ca_cert(name(f"{n} fulcio", f"{n}-fulcio-intermediate"), keys["fulcio_intermediate"], froot,
                     keys["fulcio_root"], serial_from(seed_tag, "fulcio-intermediate"), 0, EPOCH, CA_NOT_AFTER,
                     hashes.SHA384())
    troot = ca_cert(name(f"{n} tsa", f"{n}-tsa-root"), keys["tsa_root"], None, None,
                    serial_from(seed_tag, "tsa-root"), 0, EPOCH, CA_NOT_AFTER, hashes.SHA256())
    tsa = (x509.CertificateBuilder().subject_name(name(f"{n} tsa", f"{n}-tsa")).issuer_name(troot.subject)
           .public_key(keys["tsa"].public_key()).serial_number(serial_from(seed_tag, "tsa"))
           .not_valid_before(EPOCH).not_valid_after(CA_NOT_AFTER)
           .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                        data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                        crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
           .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
           .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
           .add_extension(x509.SubjectKeyIdentifier.from_public_key(keys["tsa"].public_key()), critical=False)
           .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(keys["tsa_root"].public_key()),
                          critical=False)
           .sign(keys["tsa_root"], hashes.SHA256()))
    for label, cert in {"fulcio_root": froot, "fulcio_intermediate": finter, "tsa_root": troot, "tsa": tsa}.items():
        (d / "certs" / f"{label}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (d / "instance.json").write_text(json.dumps({"name": n, "seed_tag": seed_tag, "rekor_host": f"rekor.{n}",
                                                 "tree_id": TREE_ID}, indent=2) + "\n")
    inst = Instance(d)
    write_trusted_root(inst)
    write_trust_config(inst, d / "trust_config.json")
    print(f"instance '{n}' in {d}: trusted_root.json, trust_config.json")
    return 0


def cmd_trust_config(args) -> int:
    inst = Instance(Path(args.dir))
    write_trust_config(inst, Path(args.out) if args.out else inst.dir / "trust_config.json")
    return 0


def pem_b64(cert: x509.Certificate) -> str:
    return b64(cert.public_bytes(serialization.Encoding.PEM))


def pae(payload_type: str, payload: bytes) -> bytes:
    t = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(t), t, len(payload), payload)


def cmd_sign(args) -> int:
    inst = Instance(Path(args.dir))
    now = int(time.time())
    t = args.time if args.time is not None else now
    log_time = args.log_time if args.log_time is not None else t
    tsa_time = args.tsa_time if args.tsa_time is not None else t
    if args.artifact:
        data = Path(args.artifact).read_bytes()
        digest = hashlib.sha256(data).digest()
        subject_name = args.subject_name or Path(args.artifact).name
    else:
        if not args.digest.startswith("sha256:") or len(args.digest) != 71:
            print("instance.py: --digest wants sha256:<64 hex>", file=sys.stderr)
            return 2
        data, digest = None, bytes.fromhex(args.digest[7:])
        subject_name = args.subject_name or "artifact"
    if args.legacy_dir and (args.dsse or data is None):
        print("instance.py: --legacy-dir signs the --artifact (a simple-signing payload) as a message", file=sys.stderr)
        return 2

    leaf_key = ec.generate_private_key(ec.SECP256R1())
    cert = leaf_cert(inst, leaf_key, args.identity, args.issuer, t, args.cert_validity, t)
    cert_der = cert.public_bytes(serialization.Encoding.DER)

    bundle: dict = {"mediaType": BUNDLE_TYPE}
    if args.dsse:
        statement = {"_type": INTOTO_STATEMENT_V1,
                     "subject": [{"name": subject_name, "digest": {"sha256": digest.hex()}}],
                     "predicateType": args.predicate_type, "predicate": {}}
        payload = json.dumps(statement, separators=(",", ":")).encode()
        signature = ecdsa_sign(leaf_key, pae(INTOTO_PAYLOAD_TYPE, payload))
        envelope = {"payload": b64(payload), "payloadType": INTOTO_PAYLOAD_TYPE, "signatures": [{"sig": b64(signature)}]}
        body = {"apiVersion": "0.0.1", "kind": "dsse", "spec": {
            "envelopeHash": {"algorithm": "sha256",
                             "value": hashlib.sha256(canonical_json({**envelope, "signatures": [
                                 {"keyid": "", "sig": b64(signature)}]})).hexdigest()},
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()},
            "signatures": [{"signature": b64(signature), "verifier": pem_b64(cert)}]}}
        bundle_content = {"dsseEnvelope": envelope}
    else:
        signature = leaf_key.sign(digest, ec.ECDSA(asym_utils.Prehashed(hashes.SHA256())))
        body = {"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
            "signature": {"content": b64(signature), "publicKey": {"content": pem_b64(cert)}}}}
        bundle_content = {"messageSignature": {"messageDigest": {"algorithm": "SHA2_256", "digest": b64(digest)},
                                               "signature": b64(signature)}}
    body_bytes = canonical_json(body)

    # The log: a few other entries, this one, a few more; the checkpoint signs the root.
    state_file = inst.dir / "log.json"
    count = json.loads(state_file.read_text())["entries"] if state_file.exists() else 0
    state_file.write_text(json.dumps({"entries": count + 1}) + "\n")
    before = [leaf_hash(b"%s entry %d.%d" % (inst.seed_tag.encode(), count, i)) for i in range(DUMMY_LEAVES_BEFORE)]
    after = [leaf_hash(b"%s entry %d.a%d" % (inst.seed_tag.encode(), count, i)) for i in range(DUMMY_LEAVES_AFTER)]
    leaves = before + [leaf_hash(body_bytes)] + after
    index = len(before)
    root_hash = tree_root(leaves)
    log_index = LOG_INDEX_OFFSET + count * len(leaves) + index
    log_id = inst.rekor_log_id
    note = f"{inst.rekor_host} - {TREE_ID}\n{len(leaves)}\n{b64(root_hash)}\n"
    note_sig = ecdsa_sign(inst.rekor_key, note.encode())
    checkpoint = f"{note}\n\u2014 {inst.rekor_host} {b64(log_id[:4] + note_sig)}\n"
    entry = {
        "logIndex": str(log_index),
        "logId": {"keyId": b64(log_id)},
        "kindVersion": {"kind": body["kind"], "version": body["apiVersion"]},
    }
    set_payload = {"body": b64(body_bytes), "integratedTime": log_time, "logID": log_id.hex(), "logIndex": log_index}
    set_sig = ecdsa_sign(inst.rekor_key, canonical_json(set_payload))
    if not args.no_tlog_time:
        entry["integratedTime"] = str(log_time)
        entry["inclusionPromise"] = {"signedEntryTimestamp": b64(set_sig)}
    entry["inclusionProof"] = {
        "logIndex": str(index),
        "rootHash": b64(root_hash),
        "treeSize": str(len(leaves)),
        "hashes": [b64(h) for h in audit_path(index, leaves)],
        "checkpoint": {"envelope": checkpoint},
    }
    entry["canonicalizedBody"] = b64(body_bytes)

    material: dict = {"certificate": {"rawBytes": b64(cert_der)}, "tlogEntries": [entry]}
    tsr = None
    if args.tsa:
        tsr = timestamp_response(inst, signature, tsa_time, serial_from(inst.seed_tag, "tst", count, tsa_time))
        material["timestampVerificationData"] = {"rfc3161Timestamps": [{"signedTimestamp": b64(tsr)}]}
    bundle["verificationMaterial"] = material
    bundle.update(bundle_content)
    Path(args.out).write_text(json.dumps(bundle, indent=2) + "\n")

    if args.legacy_dir:
        d = Path(args.legacy_dir)
        d.mkdir(parents=True, exist_ok=True)
        (d / "signature").write_text(b64(signature))
        (d / "certificate.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (d / "chain.pem").write_bytes(inst.fulcio_intermediate.public_bytes(serialization.Encoding.PEM)
                                      + inst.fulcio_root.public_bytes(serialization.Encoding.PEM))
        if not args.no_tlog_time:
            # cosign's dev.sigstore.cosign/bundle annotation (pkg/cosign/bundle.RekorBundle).
            rekor_bundle = {"SignedEntryTimestamp": b64(set_sig),
                            "Payload": {"body": b64(body_bytes), "integratedTime": log_time,
                                        "logIndex": log_index, "logID": log_id.hex()}}
            (d / "rekor-bundle.json").write_text(json.dumps(rekor_bundle, separators=(",", ":")))
        if tsr is not None:
            # cosign's dev.sigstore.cosign/rfc3161timestamp annotation (bundle.RFC3161Timestamp).
            (d / "rfc3161-timestamp.json").write_text(json.dumps({"SignedRFC3161Timestamp": b64(tsr)},
                                                                 separators=(",", ":")))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="instance.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=__doc__.split("\n\n")[0] + "\n\nStandalone: python3 with `cryptography`, no network.",
        epilog="""example:
  instance.py init $W/inst
  instance.py sign $W/inst --identity dev@example.com --issuer https://issuer.test \\
      --artifact a.txt --out a.sigstore.json
  imgtool verify-blob --bundle a.sigstore.json --trusted-root $W/inst/trusted_root.json \\
      --certificate-identity dev@example.com --certificate-oidc-issuer https://issuer.test a.txt
  python -m sigstore --trust-config $W/inst/trust_config.json verify identity --offline \\
      --bundle a.sigstore.json --cert-identity dev@example.com \\
      --cert-oidc-issuer https://issuer.test a.txt""")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    i = sub.add_parser("init", help="make a fresh instance in DIR",
                       description="Makes a fresh instance: Fulcio root + intermediate (P-384), CT log key, "
                       "Rekor v1 log key, TSA root + timestamping leaf (P-256), trusted_root.json and "
                       "trust_config.json. All trust starts at " + rfc3339(EPOCH) + ".")
    i.add_argument("dir", metavar="DIR")
    i.add_argument("--name", default="test", help="names the services: rekor.NAME, fulcio.NAME, ... (default: test)")
    i.add_argument("--seed", help="derive every key from this text (the same seed gives the same instance); "
                   "default: fresh random keys")
    i.add_argument("--force", action="store_true", help="replace an instance already in DIR")
    i.set_defaults(func=cmd_init)

    s = sub.add_parser("sign", help="sign an artifact, write a bundle",
                       description="Issues a leaf certificate to --identity, signs, logs, and writes a "
                       "Sigstore bundle v0.3 (hashedrekord 0.0.1 or, with --dsse, dsse 0.0.1).")
    s.add_argument("dir", metavar="DIR", help="the instance (from init)")
    s.add_argument("--identity", required=True,
                   help="the certificate's subject: a URI SAN if it contains '://', else an email SAN")
    s.add_argument("--issuer", required=True, help="the OIDC issuer (extensions 1.3.6.1.4.1.57264.1.8 and .1.1)")
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument("--artifact", metavar="FILE", help="the file signed")
    what.add_argument("--digest", metavar="sha256:HEX", help="sign this digest (a prehashed signature)")
    s.add_argument("--out", required=True, metavar="BUNDLE", help="where to write the bundle")
    s.add_argument("--dsse", action="store_true",
                   help="sign an in-toto Statement v1 about the artifact in a DSSE envelope instead")
    s.add_argument("--predicate-type", default=DEFAULT_PREDICATE, metavar="URI",
                   help=f"the statement's predicateType (default: {DEFAULT_PREDICATE})")
    s.add_argument("--subject-name", help="the statement subject's name (default: the artifact's file name)")
    s.add_argument("--time", type=int, metavar="UNIX",
                   help="signing time: the certificate's notBefore and the SCT's time (default: now)")
    s.add_argument("--log-time", type=int, metavar="UNIX", help="the log's integratedTime (default: --time)")
    s.add_argument("--tsa-time", type=int, metavar="UNIX", help="the timestamp's genTime (default: --time)")
    s.add_argument("--cert-validity", type=int, default=600, metavar="SECONDS",
                   help="the certificate is valid [time, time+SECONDS] (default: 600)")
    s.add_argument("--no-tlog-time", action="store_true",
                   help="leave out integratedTime and the signed entry timestamp (the inclusion proof stays): "
                   "only a --tsa timestamp can then prove when it was signed")
    s.add_argument("--tsa", action="store_true", help="add an RFC 3161 timestamp of the signature from the TSA")
    s.add_argument("--legacy-dir", metavar="D",
                   help="also write cosign's legacy image-signature pieces for this message signature (--artifact "
                   "is the simple-signing payload): D/signature (base64), D/certificate.pem, D/chain.pem, "
                   "D/rekor-bundle.json (annotation dev.sigstore.cosign/bundle) and, with --tsa, "
                   "D/rfc3161-timestamp.json (annotation dev.sigstore.cosign/rfc3161timestamp)")
    s.set_defaults(func=cmd_sign)

    t = sub.add_parser("trust-config", help="write sigstore-python's ClientTrustConfig",
                       description="Writes the ClientTrustConfig (trusted root + signing config) that "
                       "`python -m sigstore --trust-config FILE verify ... --offline` reads. init writes "
                       "DIR/trust_config.json already.")
    t.add_argument("dir", metavar="DIR")
    t.add_argument("--out", metavar="FILE", help="default: DIR/trust_config.json")
    t.set_defaults(func=cmd_trust_config)

    args = p.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
