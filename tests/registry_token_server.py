#!/usr/bin/python3
"""A tiny bearer-token server for the registry tests (docker-registry's `auth: token`).

Usage: registry_token_server.py HOST:PORT CERTDIR USER PASSWORD

GET /token?service=S&scope=repository:NAME:pull,push with HTTP Basic USER:PASSWORD
answers {"token": JWT, "access_token": JWT}; the JWT is RS256-signed with
CERTDIR/ca.key and carries CERTDIR/ca.crt in its x5c header, which the registry
checks against its rootcertbundle. Wrong or missing credentials get 401.
GET /health answers 200 (the harness waits on it). Test-only: stdlib + cryptography.
"""
import base64
import json
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

ADDR, CERTDIR, USER, PASSWORD = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
with open(CERTDIR + "/ca.key", "rb") as f:
    KEY = serialization.load_pem_private_key(f.read(), password=None)
with open(CERTDIR + "/ca.crt", "rb") as f:
    CERT_DER = x509.load_pem_x509_certificate(f.read()).public_bytes(serialization.Encoding.DER)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_token(service, scopes):
    access = []
    for scope in scopes:
        parts = scope.split(":")
        if len(parts) == 3 and parts[0] == "repository":
            access.append({"type": "repository", "name": parts[1], "actions": parts[2].split(",")})
    now = int(time.time())
    header = {"typ": "JWT", "alg": "RS256", "x5c": [base64.b64encode(CERT_DER).decode()]}
    claims = {"iss": "imgtool-test-issuer", "sub": USER, "aud": service, "exp": now + 300,
              "nbf": now - 10, "iat": now, "jti": str(uuid.uuid4()), "access": access}
    signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
    sig = KEY.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64url(sig)


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("token-server: " + (fmt % args) + "\n")

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/health":
            return self.reply(200, {})
        if url.path != "/token":
            return self.reply(404, {})
        want = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.headers.get("Authorization") != want:
            return self.reply(401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]})
        q = parse_qs(url.query)
        token = make_token(q.get("service", [""])[0], q.get("scope", []))
        return self.reply(200, {"token": token, "access_token": token, "expires_in": 300})


host, port = ADDR.rsplit(":", 1)
HTTPServer((host, int(port)), Handler).serve_forever()
