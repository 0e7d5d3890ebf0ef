"""A real RFC 3161 authority for tests: a throwaway CA and time-stamping certificates made with
`openssl`, and `openssl ts -reply` served over HTTP on 127.0.0.1 (a random port; no outside
network). The fixture starts the servers and stops them when the test ends."""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TSA_CONFIG = """\
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
serial = {dir}/serial
crypto_device = builtin
signer_cert = {dir}/tsa.crt
signer_key = {dir}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1
clock_precision_digits = 3
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""

TSA_EXT = ("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
           "extendedKeyUsage=critical,timeStamping\n")


def _openssl(*args: str, cwd: Path) -> None:
    proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"openssl {' '.join(args)} failed: {proc.stderr.decode()}")


class CertificateAuthority:
    """A self-signed CA (EC P-256) that issues time-stamping certificates."""

    def __init__(self, folder: Path, name: str = "Test Root CA") -> None:
        self.dir = folder
        folder.mkdir(parents=True, exist_ok=True)
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", "ca.key", "-out", "ca.crt", "-subj", f"/CN={name}", "-days", "3650",
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=folder)
        self.cert = folder / "ca.crt"

    def issue(self, folder: Path, name: str = "Test TSA", *, expired: bool = False) -> None:
        """A TSA key and certificate in `folder` (tsa.key, tsa.crt, chain.pem); `expired` makes
        one whose validity ended before today (written with `cryptography`, as openssl 3.0
        cannot set past dates)."""
        folder.mkdir(parents=True, exist_ok=True)
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                 "-keyout", "tsa.key", "-out", "tsa.csr", "-subj", f"/CN={name}", cwd=folder)
        if expired:
            self._expired(folder)
        else:
            (folder / "ext.cnf").write_text(TSA_EXT)
            _openssl("x509", "-req", "-in", "tsa.csr", "-CA", str(self.cert), "-CAkey",
                     str(self.dir / "ca.key"), "-CAcreateserial", "-out", "tsa.crt", "-days", "365",
                     "-extfile", "ext.cnf", cwd=folder)
        (folder / "chain.pem").write_bytes(self.cert.read_bytes())
        (folder / "serial").write_text("01\n")

    def _expired(self, folder: Path) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization

        csr = x509.load_pem_x509_csr((folder / "tsa.csr").read_bytes())
        ca_key = serialization.load_pem_private_key((self.dir / "ca.key").read_bytes(), None)
        ca = x509.load_pem_x509_certificate(self.cert.read_bytes())
        now = datetime.now(UTC)
        cert = (x509.CertificateBuilder().subject_name(csr.subject).issuer_name(ca.subject)
                .public_key(csr.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - timedelta(days=400)).not_valid_after(now - timedelta(days=30))
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([x509.ExtendedKeyUsageOID.TIME_STAMPING]),
                               critical=True)
                .sign(ca_key, hashes.SHA256()))  # type: ignore[arg-type]
        (folder / "tsa.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))


class Authority:
    """`openssl ts -reply` behind an HTTP server on 127.0.0.1; `url` is where to ask."""

    def __init__(self, folder: Path, ca: CertificateAuthority) -> None:
        self.dir = folder
        self.ca = ca
        (folder / "tsa.cnf").write_text(TSA_CONFIG.format(dir=folder))
        self.requests = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/tsa"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, query: bytes) -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            q, r = Path(tmp) / "q.tsq", Path(tmp) / "r.tsr"
            q.write_bytes(query)
            _openssl("ts", "-reply", "-config", str(self.dir / "tsa.cnf"), "-queryfile", str(q),
                     "-out", str(r), cwd=self.dir)
            return r.read_bytes()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        authority = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                authority.requests += 1
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                data = authority.reply(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/timestamp-reply")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class Authorities:
    """Authorities a test starts by name; all stopped when the test ends."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.started: list[Authority] = []
        self.cas: dict[str, CertificateAuthority] = {}

    def ca(self, name: str, subject: str = "Test Root CA") -> CertificateAuthority:
        if name not in self.cas:
            self.cas[name] = CertificateAuthority(self.base / f"ca-{name}", subject)
        return self.cas[name]

    def start(self, name: str, *, ca: str = "main", subject: str = "Test Root CA",
              expired: bool = False) -> Authority:
        """An authority named `name` whose TSA certificate the CA `ca` issued."""
        folder = self.base / f"tsa-{name}"
        authority_ca = self.ca(ca, subject)
        authority_ca.issue(folder, expired=expired)
        authority = Authority(folder, authority_ca)
        self.started.append(authority)
        return authority

    def stop(self) -> None:
        for authority in self.started:
            authority.stop()


def authority_pool(tmp_path: Path) -> Iterator[Authorities]:
    """The body of an `authorities` fixture: the pool, stopped when the test ends."""
    pool = Authorities(tmp_path / "authorities")
    try:
        yield pool
    finally:
        pool.stop()


# --------------------------------------------------------------------------- studies with anchors

CERT_PATH = "keys/tsa-root.pem"


def anchored_plan(urls: list[str], *, required: bool = True) -> str:
    """The sealing tests' plan with `security.timestamps` pinning one certificate per URL (the
    n-th at keys/tsa-root.pem, keys/tsa-root-<n>.pem after)."""
    from tests.sealing.conftest import PLAN

    entries = ", ".join(f'{{url: "{u}", certificate: {cert_path(i)}}}' for i, u in enumerate(urls))
    security = ("security: {require_signed: false, allowed_signers: null, "
                f"timestamps: {{authorities: [{entries}], required: {'true' if required else 'false'}}}}}")
    old = "security: {require_signed: false, allowed_signers: null}"
    assert old in PLAN
    return PLAN.replace(old, security)


def cert_path(index: int) -> str:
    return CERT_PATH if index == 0 else CERT_PATH.replace(".pem", f"-{index + 1}.pem")


def start_anchored(study: Any, pinned: list[Authority], *, required: bool = True,
                   urls: list[str] | None = None) -> str:
    """Commit the plan pinning each authority's CA certificate (and the responses)."""
    for i, authority in enumerate(pinned):
        study.write(cert_path(i), authority.ca.cert.read_bytes())
    plan = anchored_plan(urls or [a.url for a in pinned], required=required)
    study.write("aoven.yaml", plan)
    for q in ("q1", "q2"):
        for c in ("a", "b"):
            study.write(f"study/test_{c}/{q}.md", f"# {q.upper()}\n\nResponse {c.upper()}.\n")
    return study.by("lead", "plan", "aoven.yaml", "study", "keys")


def stamp(study: Any, rev: str = "HEAD") -> str:
    """`aoven-git timestamp REV` through the real CLI; the token commit."""
    from tests.conftest import run_cli

    res = run_cli("timestamp", rev, cwd=study.path)
    assert res.code == 0, res.output
    return study.git("rev-parse", "HEAD")


def honest_anchored_study(study: Any, authority: Authority) -> dict[str, str]:
    """plan → cto seals, anchored → logician seals, anchored → both reveal, each anchored: the
    commits by name."""
    commits = {"plan": start_anchored(study, [authority])}
    for rater in ("cto", "logician"):
        commits[f"seal-{rater}"] = study.digest_seal(rater)
        stamp(study)
    for rater in ("cto", "logician"):
        commits[f"reveal-{rater}"] = study.reveal(rater)
        stamp(study)
    return commits


def rewrite_history(study: Any) -> None:
    """Re-create every commit of the (linear) history with the same trees, authors and messages
    but another date: the same contents under new commit ids."""
    new_parent = None
    fmt = "%T%x00%an%x00%ae%x00%B"
    for old in study.git("rev-list", "--reverse", "HEAD").split():
        tree, name, email, msg = study.git("log", "-1", f"--format={fmt}", old).split("\0", 3)
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
               "GIT_COMMITTER_EMAIL": email, "GIT_AUTHOR_DATE": "2030-01-01T00:00:00Z",
               "GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z"}
        args = ["commit-tree", tree, "-m", msg or "commit"] + (["-p", new_parent] if new_parent else [])
        new_parent = study.git(*args, env=env)
    study.git("reset", "-q", "--hard", new_parent)
