"""Debian's headless Chromium, driven over the DevTools protocol through a pipe.

`--remote-debugging-pipe` speaks the protocol on file descriptors 3 (commands in) and 4 (events
and replies out), each message a JSON object ended by a NUL byte: no port, no websocket, no
dependency. The flags are the ones that keep Chromium off the network of this machine kind
(no background networking, no component updates, no sync), and each browser gets a fresh
profile folder.
"""

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

BINARY = "/usr/lib/chromium/chromium"

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--hide-scrollbars", "--mute-audio", "--disable-dev-shm-usage", "--remote-debugging-pipe")


def _high(fd):
    """fd moved above 9, so that the shell's 3< and 4> cannot close it (bash: dash takes one digit)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    """One Chromium process with one page; use as a context manager."""

    def __init__(self, binary=BINARY, width=1440, height=1000):
        self.binary, self.size = binary, (width, height)
        self.events, self._next, self._buffer = [], 0, b""

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = _high(to_browser_r), _high(from_browser_w)
        command = [self.binary, *FLAGS, f"--user-data-dir={self.profile}",
                   f"--window-size={self.size[0]},{self.size[1]}", "about:blank"]
        # The shell puts the pipes on descriptors 3 and 4, whatever numbers they have here.
        shell = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-'
        self.process = subprocess.Popen(["/bin/bash", "-c", shell, *command], pass_fds=(to_browser_r, from_browser_w),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.call(domain, session=True)
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=60):
        """Sends one command and returns its result; events that arrive meanwhile are kept."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, event, timeout=60):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == event for e in self.events):
            self.events.append(self._read(deadline))

    def open(self, url):
        """Loads url and waits for its load event."""
        self.events = []
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, x, y):
        """A left click at (x, y) in the page's viewport, as a mouse gives it."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 0 if kind == "mouseMoved" else 1}, session=True)

    def problems(self):
        """Console errors and warnings, uncaught exceptions and failed loads since the last open."""
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append("exception: " + params["exceptionDetails"].get("text", "") + " " +
                             str(params["exceptionDetails"].get("exception", {}).get("description", "")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(f"console.{params['type']}: " + " ".join(str(a.get("value", a.get("description")))
                                                                      for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") in ("error", "warning"):
                found.append(f"log {params['entry']['level']}: {params['entry'].get('text')} "
                             f"{params['entry'].get('url', '')}")
        return found

    def screenshot(self, path, full_page=True):
        """A PNG of the page, the whole of it when full_page."""
        params = {"format": "png"}
        if full_page:
            width, height = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        data = self.call("Page.captureScreenshot", params, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
