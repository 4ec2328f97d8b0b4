#!/usr/bin/env python3
"""tests/site/browser_check.py: a static site in a real headless browser (Debian's chromium),
driven over the DevTools protocol with nothing but the standard library.

    browser_check.py CHROMIUM SITE_DIR OUT_DIR [--screenshot PAGE ...]

Crawls SITE_DIR from index.html through every relative link, loading each page from the file
system (file://), and fails (exit 1, one FAIL line each) on: a JavaScript exception or a console
error or warning; a log entry of level error (a resource that did not load); a network request
that failed; an image that did not load (complete with natural width 0); a link or image to a file
that does not exist; anything fetched from outside SITE_DIR (the site must open offline). Writes
OUT_DIR/PAGE.txt (the page's visible text) for every page and OUT_DIR/PAGE.png (a full-page
screenshot at 1280 px) for each --screenshot PAGE. Prints one line per page.

    browser_check.py --static SITE_DIR

checks without a browser what can be checked so: every page's links and images name files that
exist, no script element, no absolute URL (exit 1 and FAIL lines otherwise).

    browser_check.py --colour PNG RRGGBB TOLERANCE

prints how many pixels of PNG lie within TOLERANCE (per channel) of the colour (8-bit RGB or RGBA
PNGs, as chromium writes them).
"""
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib


# ---- a minimal WebSocket client (RFC 6455: text frames, client masking) -------------------------

class WebSocket:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        req = (f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("websocket handshake: connection closed")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise RuntimeError(f"websocket handshake refused: {status!r}")
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x81])
        if n < 126:
            hdr += bytes([0x80 | n])
        elif n < 65536:
            hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 8:
                raise RuntimeError("websocket closed by the browser")
            if opcode in (0, 1, 2):
                message += payload
                if b0 & 0x80:
                    return message.decode()


class Browser:
    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="benchdb-chromium-")
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--hide-scrollbars", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.time() + 60
        while port is None and time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            if "DevTools listening on ws://" in line:
                port = int(line.split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        if port is None:
            raise RuntimeError("chromium did not open its DevTools port")
        # keep draining stderr so that chromium never blocks on it
        import threading
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        pages = []
        for _ in range(100):
            pages = [t for t in json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
                     if t.get("type") == "page"]
            if pages:
                break
            time.sleep(0.1)
        self.ws = WebSocket(pages[0]["webSocketDebuggerUrl"])
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, name, timeout=60):
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e["method"] == name:
                del self.events[i]
                return e
        self.ws.sock.settimeout(timeout)
        while time.time() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == name:
                return msg
            if "method" in msg:
                self.events.append(msg)
        raise RuntimeError(f"no {name} within {timeout} s")

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        subprocess.run(["rm", "-rf", self.profile])


PAGE_FACTS = """JSON.stringify({
  title: document.title,
  text: document.body ? document.body.innerText : "",
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href')),
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), complete: i.complete,
                                               width: i.naturalWidth})),
  scripts: document.scripts.length,
  external: Array.from(document.querySelectorAll('[src],[href]')).map(e =>
      e.getAttribute('src') || e.getAttribute('href')).filter(u => /^[a-z][a-z0-9+.-]*:/i.test(u)),
  height: document.documentElement.scrollHeight
})"""


def check_site(chromium, site, out, screenshots):
    site = os.path.realpath(site)
    failures = []
    browser = Browser(chromium)
    try:
        todo, seen = ["index.html"], set()
        while todo:
            page = todo.pop(0)
            if page in seen:
                continue
            seen.add(page)
            path = os.path.join(site, page)
            browser.events.clear()
            browser.call("Page.navigate", url="file://" + urllib.parse.quote(path))
            browser.wait_event("Page.loadEventFired")
            time.sleep(0.2)   # late console messages and image decodes
            facts = json.loads(browser.call("Runtime.evaluate", expression=PAGE_FACTS,
                                            returnByValue=True)["result"]["value"])
            for e in browser.events:
                m, p = e["method"], e.get("params", {})
                if m == "Runtime.exceptionThrown":
                    failures.append(f"{page}: exception: {p['exceptionDetails'].get('text')}")
                elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                    failures.append(f"{page}: console {p['type']}: {p.get('args')}")
                elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                    failures.append(f"{page}: log {p['entry']['level']}: {p['entry'].get('text')} "
                                    f"{p['entry'].get('url', '')}")
                elif m == "Network.loadingFailed":
                    failures.append(f"{page}: a request failed: {p.get('errorText')}")
                elif m == "Network.requestWillBeSent":
                    url = p["request"]["url"]
                    target = urllib.parse.unquote(urllib.parse.urlparse(url).path)
                    if not url.startswith("file://") or not os.path.realpath(target).startswith(site):
                        failures.append(f"{page}: fetched from outside the site: {url}")
            if facts["scripts"]:
                failures.append(f"{page}: {facts['scripts']} script elements (the site has none)")
            for u in facts["external"]:
                failures.append(f"{page}: an absolute URL: {u}")
            for img in facts["images"]:
                if not img["complete"] or img["width"] == 0:
                    failures.append(f"{page}: image {img['src']} did not load")
            for href in facts["links"]:
                target = urllib.parse.unquote(href.split("#", 1)[0])
                if not target:
                    continue
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
                if not os.path.isfile(resolved):
                    failures.append(f"{page}: link {href} resolves to nothing")
                elif resolved.endswith(".html") and resolved.startswith(site + os.sep):
                    todo.append(os.path.relpath(resolved, site))
            name = page[:-5].replace(os.sep, "_")
            with open(os.path.join(out, name + ".txt"), "w") as f:
                f.write(facts["title"] + "\n" + facts["text"])
            if page in screenshots:
                browser.call("Emulation.setDeviceMetricsOverride", width=1280,
                             height=min(max(facts["height"], 800), 4000), deviceScaleFactor=1,
                             mobile=False)
                time.sleep(0.3)
                shot = browser.call("Page.captureScreenshot", format="png")
                with open(os.path.join(out, name + ".png"), "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
                browser.call("Emulation.clearDeviceMetricsOverride")
            print(f"{page}: {len(facts['links'])} links, {len(facts['images'])} images, "
                  f"{len(facts['text'])} characters of text")
        missing = [s for s in screenshots if s not in seen]
        for s in missing:
            failures.append(f"{s}: never reached from index.html")
        print(f"{len(seen)} pages loaded")
    finally:
        browser.close()
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, [[tuple(r[x * bpp:x * bpp + 3]) for x in range(width)] for r in rows]


def check_static(site):
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self):
            super().__init__()
            self.refs, self.scripts = [], 0

        def handle_starttag(self, tag, attrs):
            self.scripts += tag == "script"
            for k, v in attrs:
                if k in ("href", "src") and v is not None:
                    self.refs.append(v)

    failures, pages = [], 0
    for root, _, files in os.walk(site):
        for name in files:
            if not name.endswith(".html"):
                continue
            pages += 1
            path = os.path.join(root, name)
            p = Page()
            p.feed(open(path, encoding="utf-8").read())
            rel = os.path.relpath(path, site)
            if p.scripts:
                failures.append(f"{rel}: {p.scripts} script elements")
            for ref in p.refs:
                if "://" in ref or ref.startswith(("//", "data:", "javascript:")):
                    failures.append(f"{rel}: an absolute URL: {ref}")
                    continue
                target = urllib.parse.unquote(ref.split("#", 1)[0])
                if target and not os.path.isfile(os.path.join(root, target)):
                    failures.append(f"{rel}: {ref} names no file")
    print(f"{pages} pages checked")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures or not pages else 0


def main():
    if sys.argv[1:2] == ["--static"]:
        return check_static(sys.argv[2])
    if sys.argv[1:2] == ["--colour"]:
        path, hexcolour, tol = sys.argv[2], sys.argv[3], int(sys.argv[4])
        want = tuple(int(hexcolour[i:i + 2], 16) for i in (0, 2, 4))
        _, _, rows = png_pixels(path)
        print(sum(all(abs(p[k] - want[k]) <= tol for k in range(3)) for row in rows for p in row))
        return 0
    chromium, site, out = sys.argv[1:4]
    shots = []
    args = sys.argv[4:]
    while args:
        if args[0] == "--screenshot" and len(args) > 1:
            shots.append(args[1])
            args = args[2:]
        else:
            print(f"unknown argument {args[0]}")
            return 2
    os.makedirs(out, exist_ok=True)
    return check_site(chromium, site, out, shots)


if __name__ == "__main__":
    sys.exit(main())
