"""Certificates for Errand's connection interop servers, made fresh with trustme on every start.

Usage: ``python make_certificates.py DIR`` writes into DIR (.ci/interop-servers passes a mktemp -d):

- ``ca.pem``: the test CA that issued every certificate below (ERRAND_CONNECTION_CA).
- ``other-ca.pem``: a second, unrelated CA that issued nothing here, for "CA does not match"
  tests (ERRAND_CONNECTION_OTHER_CA).
- ``server.pem`` / ``server.key``: the servers' certificate, valid for ``localhost``,
  ``127.0.0.1`` and ``api.errand.test`` (ERRAND_CONNECTION_SERVER_CERT / _SERVER_KEY).
- ``client.pem`` / ``client.key``: a client certificate for mutual TLS, subject
  ``O=Errand interop, OU=Errand client, CN=errand-client``
  (ERRAND_CONNECTION_CLIENT_CERT / _CLIENT_KEY).
- ``client.encrypted.key``: the same client key as PKCS#8 PEM (``BEGIN ENCRYPTED PRIVATE KEY``),
  encrypted with the password ``errand-test`` (ERRAND_CONNECTION_CLIENT_KEY_ENCRYPTED).

Keys are ECDSA P-256 (trustme's default); every file is PEM. Private keys are written 0600.
"""

import os
import sys

import trustme
from cryptography.hazmat.primitives import serialization

CLIENT_KEY_PASSWORD = b"errand-test"


def write(directory, name, data):
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def main(directory):
    ca = trustme.CA(organization_name="Errand interop", organization_unit_name="Errand test CA")
    other_ca = trustme.CA(organization_name="Errand interop", organization_unit_name="Errand other CA")
    server = ca.issue_cert(
        "localhost", "127.0.0.1", "api.errand.test",
        common_name="localhost", organization_name="Errand interop", organization_unit_name="Errand server",
    )
    client = ca.issue_cert(
        "client.errand.test",
        common_name="errand-client", organization_name="Errand interop", organization_unit_name="Errand client",
    )

    write(directory, "ca.pem", ca.cert_pem.bytes())
    write(directory, "other-ca.pem", other_ca.cert_pem.bytes())
    write(directory, "server.pem", b"".join(blob.bytes() for blob in server.cert_chain_pems))
    write(directory, "server.key", server.private_key_pem.bytes())
    write(directory, "client.pem", b"".join(blob.bytes() for blob in client.cert_chain_pems))
    write(directory, "client.key", client.private_key_pem.bytes())

    key = serialization.load_pem_private_key(client.private_key_pem.bytes(), password=None)
    encrypted = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.BestAvailableEncryption(CLIENT_KEY_PASSWORD),
    )
    write(directory, "client.encrypted.key", encrypted)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_certificates.py DIR")
    main(sys.argv[1])
