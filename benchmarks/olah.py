"""olah (a Hugging Face Hub mirror) on loopback: the Hub that ``push`` and ``pull`` meet in
the speed benchmark of ``pull`` (``benchmarks/speed/hub_pull.py``), the crash campaign
(``benchmarks/reliability/``) and the Hub's kill tests (``tests/faults``), with no network.

olah runs from its own virtual environment, ``.venv-olah`` at the checkout's root (its pins
clash with the project's).
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

OLAH = Path(__file__).resolve().parents[1] / ".venv-olah" / "bin" / "olah-cli"


def start_olah(root: Path, *, moving: bool = False) -> tuple[subprocess.Popen, str]:
    """olah on a free loopback port serving ``root/mirrors``; ``moving``: branches move while
    it runs (the crash campaign pushes), so it resolves them on every request."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (root / "config.toml").write_text(
        f'[basic]\nhost = "127.0.0.1"\nport = {port}\nrepos-path = "{root / "cache"}"\n'
        f'mirrors-path = ["{root / "mirrors"}"]\nhf-netloc = "127.0.0.1:9"\n'
        'hf-lfs-netloc = "127.0.0.1:9"\nhf-scheme = "http"\n'
        + ("metadata-cache-ttl = 0\n" if moving else "")
        + "[accessibility]\noffline = true\n"
    )
    log = open(root / "olah.log", "wb")  # noqa: SIM115 (lives as long as the server)
    server = subprocess.Popen(
        [str(OLAH), "-c", "config.toml"], cwd=root, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/api/models/x/y/revision/main", timeout=2)
        except urllib.error.HTTPError:
            return server, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError((root / "olah.log").read_text())
