#!/usr/bin/env python3
"""Prints the identity a Sigstore bundle's signing certificate names, as two lines: the
subject (its one SAN: email, URI or other name) and the OIDC issuer (Fulcio extension
1.3.6.1.4.1.57264.1.8, else the legacy 1.3.6.1.4.1.57264.1.1). Prints nothing for a bundle
without a certificate. Used to give each real-world bundle the identity it was signed
with (tests/realworld_sigstore.sh); needs Python's `cryptography`."""
import base64
import json
import sys

from cryptography import x509

ISSUER_V2 = "1.3.6.1.4.1.57264.1.8"  # a DER UTF8String
ISSUER_V1 = "1.3.6.1.4.1.57264.1.1"  # raw bytes


def leaf_der(bundle):
    material = bundle.get("verificationMaterial", {})
    if "certificate" in material:
        return base64.b64decode(material["certificate"]["rawBytes"])
    chain = material.get("x509CertificateChain", {}).get("certificates", [])
    return base64.b64decode(chain[0]["rawBytes"]) if chain else None


def utf8_string(der):
    """The text of a DER UTF8String (tag 12, short or long length)."""
    if len(der) < 2 or der[0] != 0x0C:
        raise ValueError("issuer extension is not a UTF8String")
    length, start = der[1], 2
    if length & 0x80:
        start = 2 + (length & 0x7F)
        length = int.from_bytes(der[2:start], "big")
    return der[start : start + length].decode()


def issuer_of(cert):
    # Fulcio's own extensions are unknown to cryptography: their value is the raw DER.
    by_oid = {
        e.oid.dotted_string: e.value.value for e in cert.extensions if isinstance(e.value, x509.UnrecognizedExtension)
    }
    if ISSUER_V2 in by_oid:
        return utf8_string(by_oid[ISSUER_V2])
    return by_oid.get(ISSUER_V1, b"").decode()


def main():
    with open(sys.argv[1], "rb") as f:
        der = leaf_der(json.load(f))
    if der is None:
        return
    cert = x509.load_der_x509_certificate(der)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    first = next(iter(names))
    subject = first.value if isinstance(first.value, str) else first.value.decode(errors="replace")
    print(subject)
    print(issuer_of(cert))


if __name__ == "__main__":
    main()
