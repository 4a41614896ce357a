#!/usr/bin/env python3
"""An implementation of Cohort's signed-file checks written apart from the Swift code, for tests.

usage: verify_dsse.py ENVELOPE ROOTHEX
Recomputes the DSSE pre-authentication encoding, verifies the ECDSA P-256 signature with the key in
the payload's signer, folds the signer's proof of inclusion (cohort-v1: RFC 6962 hashing, depth 4)
and checks that it reaches ROOTHEX. Prints 'ok TYPE' and exits 0, or prints the failure and exits 1.
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def pae(payload_type: bytes, payload: bytes) -> bytes:
    return b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type, len(payload), payload)


def fold(public_key: bytes, index: int, path: list) -> bytes:
    node = hashlib.sha256(b"\x00" + public_key).digest()
    for sibling in path:
        if len(sibling) != 32:
            raise ValueError("inclusion hash is not 32 bytes")
        node = hashlib.sha256(b"\x01" + (sibling + node if index % 2 else node + sibling)).digest()
        index //= 2
    if index != 0:
        raise ValueError("index outside the tree")
    return node


def main() -> int:
    envelope_path, root_hex = sys.argv[1], sys.argv[2]
    envelope = json.load(open(envelope_path))
    payload = base64.b64decode(envelope["payload"], validate=True)
    body = json.loads(payload)
    signer = body["signer"]
    if signer["scheme"] != "cohort-v1" or len(signer["inclusionHashes"]) != 4:
        print("signer is not a cohort-v1 proof of depth 4")
        return 1
    public_key = base64.b64decode(signer["publicKey"], validate=True)
    if len(envelope["signatures"]) != 1:
        print("expected exactly one signature")
        return 1
    signature = base64.b64decode(envelope["signatures"][0]["sig"], validate=True)
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), public_key)
    try:
        key.verify(signature, pae(envelope["payloadType"].encode(), payload), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        print("signature does not verify")
        return 1
    root = fold(public_key, signer["publicKeyIndex"], [base64.b64decode(h, validate=True) for h in signer["inclusionHashes"]])
    if root.hex() != root_hex:
        print("proof folds to %s, not %s" % (root.hex(), root_hex))
        return 1
    print("ok " + envelope["payloadType"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
