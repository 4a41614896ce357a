#!/usr/bin/env python3
"""Checks who wrote a Cohort notice from what a sink delivered, trusting neither the transport nor
the sink: the signed envelope travels with every notice.

usage: verify_notice.py --collaboration ID ROOT... < DELIVERY
DELIVERY is one notice as a sink gives it: a file sink's line, an exec sink's standard input, the
"data" of a webhook's body. ID is the collaboration you expect notices from, and each ROOT the hex
root of a participant of it you trust, both known to you beforehand, never taken from the delivery
(`cohort participants list` in the collaboration, or from a person's card with `cohort id root --card
CARD --collaboration ID --salt SALT`, the salt being the collaboration's). Prints "ok ID TYPE ROOT"
and exits 0, or prints why not and exits 1. Act on the signed notice only: the delivery's other
fields are checked against it, but nothing else in `signed` is signed. Needs `cryptography`.
"""
import base64
import hashlib
import json
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

NOTICE = "application/vnd.cohort.notice+json"


def strict(pairs):
    """A JSON object whose keys are each named once: no second value hides behind the first."""
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key is named twice")
    return dict(pairs)


def problem(delivery, collaboration, trusted):
    signed = delivery.get("signed") or {}
    envelope = signed.get("envelope") or {}
    if envelope.get("payloadType") != NOTICE or len(envelope.get("signatures", [])) != 1:
        return "no signed notice with exactly one signature"
    payload = base64.b64decode(envelope["payload"], validate=True)
    notice = json.loads(payload, object_pairs_hook=strict)
    signer = notice["signer"]
    if signer["scheme"] != "cohort-v1" or len(signer["inclusionHashes"]) != 4:
        return "the signer is not a cohort-v1 proof of depth 4"
    # The signature over DSSE's pre-authentication encoding, by the key the payload names.
    key = base64.b64decode(signer["publicKey"], validate=True)
    kind = envelope["payloadType"].encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)
    signature = base64.b64decode(envelope["signatures"][0]["sig"], validate=True)
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key).verify(signature, pae, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return "the signature does not verify"
    # The key's proof of inclusion folds to the signer's root (RFC 6962 hashing).
    index = signer["publicKeyIndex"]
    if type(index) is not int or not 0 <= index < 16:
        return "the key's index is not a whole number from 0 to 15"
    node = hashlib.sha256(b"\x00" + key).digest()
    for sibling in (base64.b64decode(h, validate=True) for h in signer["inclusionHashes"]):
        if len(sibling) != 32:
            return "an inclusion hash is not 32 bytes"
        node = hashlib.sha256(b"\x01" + (sibling + node if index % 2 else node + sibling)).digest()
        index //= 2
    root = node.hex()
    if index != 0 or root != notice["actor"] or root != signed.get("root"):
        return "the proof does not fold to the notice's actor"
    if notice["collaboration"] != collaboration:
        return "signed for collaboration %r, not %r" % (notice["collaboration"], collaboration)
    if root not in trusted:
        return "signed by %s, whom you do not trust" % root
    # What the transport says must be what was signed.
    for field in ("id", "type", "time", "collaboration", "actor", "data"):
        if delivery.get(field) != notice.get(field):
            return "'%s' is not what was signed" % field
    return None


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "--collaboration":
        print(next(line for line in __doc__.splitlines() if line.startswith("usage:")), file=sys.stderr)
        return 2
    try:
        delivery = json.loads(sys.stdin.read(), object_pairs_hook=strict)
        why = problem(delivery, sys.argv[2], set(sys.argv[3:]))
    except (ValueError, KeyError, TypeError) as error:
        why = "not a delivery: %s" % error
    print("refused: " + why if why else "ok %s %s %s" % (delivery["id"], delivery["type"], delivery["actor"]))
    return 1 if why else 0


if __name__ == "__main__":
    sys.exit(main())
