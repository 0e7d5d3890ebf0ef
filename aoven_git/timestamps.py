"""RFC 3161 time-stamp tokens over commit ids (docs/sealing.md, "Independent time anchors").

Ancestry proves order inside the repository, never *when*. A token from an authority nobody in
the team controls fixes a commit id (and through its hash the whole ancestry) at a time. The
message a token covers is the commit id as written by git (40 hex digits for SHA-1, 64 for
SHA-256 repositories), hashed with SHA-256 for the imprint, so a token named for one commit cannot
be moved to another. Parsing and offline verification use `rfc3161-client`; the one online step
(`request_token`) uses urllib, imported only there. Nothing here touches git or the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

#: where tokens live: `timestamps/<commit>.tsr` (first authority), `<commit>.<n>.tsr` (the n-th)
TOKEN_DIR = "timestamps"
MAX_TOKEN_BYTES = 64 * 1024
_TOKEN_NAME = re.compile(r"^timestamps/([0-9a-f]{40}|[0-9a-f]{64})(?:\.([2-9]|[1-9][0-9]))?\.tsr$")


class TimestampError(Exception):
    """An authority could not give a usable token (network, HTTP status, a refused request)."""


@dataclass(frozen=True)
class Authority:
    """One pinned authority of the plan: where to ask, and the certificate (PEM, a path in the
    repository) its tokens must chain to."""

    url: str
    certificate: str


@dataclass(frozen=True)
class Anchor:
    """One committed token as verify-seal judged it, offline: the commit it is named for, the
    authority whose pinned certificate it chains to and its time, or why it proves nothing."""

    path: str
    commit: str
    authority: str | None = None
    time: datetime | None = None
    error: str | None = None

    @property
    def valid(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "commit": self.commit, "authority": self.authority,
                "time": self.time.isoformat() if self.time else None, "error": self.error}


def token_path(commit: str, index: int = 0) -> str:
    """Where the token of the `index`-th authority over `commit` is committed."""
    return f"{TOKEN_DIR}/{commit}.tsr" if index == 0 else f"{TOKEN_DIR}/{commit}.{index + 1}.tsr"


def named_commit(path: str) -> str | None:
    """The commit a token file is named for, or None for a name that is not a token's."""
    m = _TOKEN_NAME.match(path)
    return m.group(1) if m else None


def message(commit: str) -> bytes:
    """The bytes a token covers: the commit id in ASCII (hashed with SHA-256 for the imprint)."""
    return commit.encode("ascii")


def build_request(commit: str) -> tuple[bytes, int]:
    """A DER time-stamp query over `commit` with a fresh nonce and the authority's certificate
    requested (so the token carries the chain verify-seal checks offline)."""
    from rfc3161_client import HashAlgorithm, TimestampRequestBuilder

    req = (TimestampRequestBuilder().data(message(commit)).hash_algorithm(HashAlgorithm.SHA256)
           .nonce(nonce=True).cert_request(cert_request=True).build())
    return req.as_bytes(), int(req.nonce or 0)


def _post(url: str, body: bytes, timeout: float) -> bytes:
    import urllib.request

    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/timestamp-query", "Accept": "application/timestamp-reply"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        data: bytes = reply.read(MAX_TOKEN_BYTES + 1)
    if len(data) > MAX_TOKEN_BYTES:
        raise TimestampError(f"{url}: the reply is larger than {MAX_TOKEN_BYTES} bytes")
    return data


def request_token(url: str, commit: str, *, timeout: float = 10.0, retries: int = 2) -> bytes:
    """Ask `url` for a token over `commit`; the reply is checked (granted, the nonce sent, the
    imprint of this commit) before it is returned. Network failures and 5xx replies are retried
    `retries` times with a short back-off; anything else fails at once with the reason.
    (urllib is imported here, not with the module: verify-seal never needs it.)"""
    import time
    import urllib.error

    if not url.startswith(("http://", "https://")):
        raise TimestampError(f"{url!r} is not an http(s) URL")
    body, nonce = build_request(commit)
    last = ""
    for attempt in range(retries + 1):
        try:
            return _checked_reply(url, _post(url, body, timeout), commit, nonce)
        except urllib.error.HTTPError as exc:
            last = f"HTTP {exc.code} {exc.reason}"
            if exc.code < 500:
                break
        except (urllib.error.URLError, OSError) as exc:
            last = str(getattr(exc, "reason", exc))
        if attempt < retries:
            time.sleep(0.2 * (attempt + 1))
    raise TimestampError(f"the time-stamp authority {url} gave no token: {last}")


def _checked_reply(url: str, data: bytes, commit: str, nonce: int) -> bytes:
    import hashlib

    from rfc3161_client import PKIStatus, decode_timestamp_response

    try:
        resp = decode_timestamp_response(data)
    except ValueError as exc:
        raise TimestampError(f"{url}: the reply is not a time-stamp response ({exc})") from None
    if resp.status not in (PKIStatus.GRANTED, PKIStatus.GRANTED_WITH_MODS):
        raise TimestampError(f"{url}: the request was refused (status {resp.status}: "
                             f"{' '.join(resp.status_string)})")
    if resp.tst_info.nonce != nonce:
        raise TimestampError(f"{url}: the token's nonce is not the one sent (a replayed reply?)")
    if resp.tst_info.message_imprint.message != hashlib.sha256(message(commit)).digest():
        raise TimestampError(f"{url}: the token covers other data than commit {commit[:10]}")
    return data


def load_certificates(pem: bytes) -> list[object]:
    """The certificates of a PEM file (ValueError when there is none)."""
    from cryptography import x509

    return list(x509.load_pem_x509_certificates(pem))


def verify_token(path: str, data: bytes, commit: str,
                 pinned: list[tuple[str, list[object]]]) -> Anchor:
    """Judge one committed token offline: it must parse, carry a nonce, be signed by a key whose
    certificate chains (at the token's time) to one authority's pinned certificates, with the
    time-stamping key usage, and cover exactly `commit` (the commit it is named for). `pinned` is
    (authority url, certificates) per authority of the plan."""
    from rfc3161_client import VerificationError, VerifierBuilder, decode_timestamp_response

    if len(data) > MAX_TOKEN_BYTES:
        return Anchor(path, commit, error=f"larger than {MAX_TOKEN_BYTES} bytes")
    try:
        resp = decode_timestamp_response(data)
    except ValueError as exc:
        return Anchor(path, commit, error=f"not a time-stamp response ({exc})")
    try:
        nonce = resp.tst_info.nonce
    except ValueError as exc:  # a rejection carries no token at all
        return Anchor(path, commit, error=f"no token in the response ({exc})")
    if nonce is None:
        return Anchor(path, commit, error="the token has no nonce")
    if not pinned:
        return Anchor(path, commit, error="the plan pins no authority (security.timestamps)")
    reasons = []
    for url, certs in pinned:
        try:
            VerifierBuilder(roots=list(certs)).build().verify_message(resp, message(commit))  # type: ignore[arg-type]
        except (VerificationError, ValueError) as exc:
            reasons.append(f"{url}: {_short(str(exc))}")
            continue
        return Anchor(path, commit, url, _utc(resp.tst_info.gen_time))
    return Anchor(path, commit, error="; ".join(reasons))


def _short(reason: str) -> str:
    """OpenSSL's error stack says the useful part in its `data` field (e.g. "certificate has
    expired"); the rest is noise for a person."""
    m = re.search(r'data: "(?:Verify error: )?([^"]+)"', reason)
    return f"certificate chain: {m.group(1)}" if m else reason


def _utc(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)
