"""A page loaded in a real headless Chromium, for tests: its text, what it logged, which images failed.

Chromium is driven over its DevTools protocol on a pipe (`--remote-debugging-pipe`: JSON messages ended by
a NUL byte, commands on fd 3 and replies on fd 4), so no websocket library and no port are needed.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

# Any of these, on PATH, is the browser (Debian's package installs `chromium`).
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium() -> str | None:
    return next((p for p in map(shutil.which, NAMES) if p), None)


@dataclass
class PageLoad:
    text: str  # document.body.innerText
    errors: list[str] = field(default_factory=list)  # console errors, uncaught exceptions, failed loads
    broken_images: list[str] = field(default_factory=list)  # <img> that did not load
    values: dict = field(default_factory=dict)  # what each `evaluate` expression returned


def _above_4(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class _Pipe:
    def __init__(self, binary: str, profile: str):
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        # Above 4, so that putting one end on fd 3 can never overwrite the other (pytest's capture takes
        # low descriptors, and a pipe end may itself be 3 or 4).
        cmd_r, out_w = (_above_4(fd) for fd in (cmd_r, out_w))
        # bash (dash reads one-digit descriptors only) puts the pipe ends on fds 3 and 4 for Chromium.
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{cmd_r} 4>&{out_w}', binary, "--headless", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(cmd_r, out_w), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(cmd_r)
        os.close(out_w)
        self.messages: queue.Queue = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = b""
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        """Keep Chromium's stderr (a full pipe would stall it), the last of it for an error message."""
        while chunk := self.proc.stderr.read1(1 << 16):
            self.stderr = (self.stderr + chunk)[-4000:]

    def _read(self) -> None:
        buf = b""
        while chunk := os.read(self._out_r, 1 << 16):
            buf += chunk
            *done, buf = buf.split(b"\0")
            for m in done:
                self.messages.put(json.loads(m))
        self.messages.put(None)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        try:
            os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        except BrokenPipeError:
            self.proc.wait(timeout=10)
            raise RuntimeError(f"Chromium exited (code {self.proc.returncode}): "
                               f"{self.stderr.decode(errors='replace')}") from None
        return self._next

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)


class Browser:
    """One headless Chromium for several pages: `with Browser() as b: b.load(url)`."""

    def __enter__(self) -> "Browser":
        binary = chromium()
        if binary is None:
            raise RuntimeError("no Chromium on PATH")
        self._profile = tempfile.TemporaryDirectory(prefix="qlabench-chromium-")
        self._pipe = _Pipe(binary, self._profile.name)
        return self

    def __exit__(self, *exc) -> None:
        self._pipe.close()
        self._profile.cleanup()

    def load(self, url: str, evaluate: dict[str, str] | None = None, timeout_s: float = 90) -> PageLoad:
        """Open `url` in a new tab, wait for its load event, read its text and what it logged."""
        return _drive(self._pipe, url, evaluate or {}, time.monotonic() + timeout_s)


def load(url: str, evaluate: dict[str, str] | None = None, timeout_s: float = 90) -> PageLoad:
    """`url` in a fresh browser of its own."""
    with Browser() as b:
        return b.load(url, evaluate, timeout_s)


def _drive(pipe: _Pipe, url: str, evaluate: dict[str, str], deadline: float) -> PageLoad:
    errors: list[str] = []
    replies: dict[int, dict] = {}
    loaded = False

    def wait(pred) -> None:
        nonlocal loaded
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"Chromium did not answer in time loading {url}")
            try:
                m = pipe.messages.get(timeout=left)
            except queue.Empty:
                continue
            if m is None:
                raise RuntimeError(f"Chromium exited (code {pipe.proc.poll()}) loading {url}: "
                                   f"{pipe.stderr.decode(errors='replace')}")
            if "id" in m:
                if "error" in m:
                    raise RuntimeError(f"DevTools error: {m['error']}")
                replies[m["id"]] = m.get("result", {})
            method, p = m.get("method"), m.get("params", {})
            if method == "Page.loadEventFired":
                loaded = True
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif method == "Runtime.exceptionThrown":
                errors.append("exception: " + p["exceptionDetails"].get("text", ""))
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(f"log ({p['entry'].get('source')}): {p['entry']['text']} {p['entry'].get('url', '')}")

    def call(method: str, params: dict | None = None, session: str | None = None) -> dict:
        i = pipe.send(method, params, session)
        wait(lambda: i in replies)
        return replies.pop(i)

    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Page"):
        call(f"{domain}.enable", session=session)
    call("Page.navigate", {"url": url}, session)
    wait(lambda: loaded)

    def value(expression: str):
        r = call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression!r}: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    broken = value("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    out = PageLoad(value("document.body.innerText"), errors, broken, {k: value(e) for k, e in evaluate.items()})
    call("Target.closeTarget", {"targetId": target})
    return out
