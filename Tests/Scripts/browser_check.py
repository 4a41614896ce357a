#!/usr/bin/env python3
"""Renders a page in headless Chromium at several widths and reports what a person would see.

    browser_check.py CHROMIUM URL OUTDIR WIDTH...

Talks the Chrome DevTools Protocol over --remote-debugging-pipe (file descriptors 3 and 4, messages
ended by a NUL byte), so it needs nothing beyond Python and the browser. For each width it prints one
JSON line: the title, the text of #link, the document's scroll and client widths, the widest element
that sticks out on the right, and the screenshot it saved as OUTDIR/page-WIDTH.png.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

MEASURE = """JSON.stringify((() => {
  const root = document.documentElement;
  let widest = null;
  for (const element of document.querySelectorAll('body *')) {
    const right = element.getBoundingClientRect().right;
    if (right > root.clientWidth + 0.5 && (!widest || right > widest.right)) {
      widest = {tag: element.tagName.toLowerCase(), id: element.id, right: right};
    }
  }
  const link = document.getElementById('link');
  return {title: document.title, link: link ? link.textContent : null,
          linkRight: link ? link.getBoundingClientRect().right : null,
          scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, overflowing: widest};
})())"""


class Browser:
    def __init__(self, chromium):
        self.profile = tempfile.mkdtemp(prefix="cohort-chromium-")
        to_browser_read, self.to_browser = os.pipe()
        self.from_browser, from_browser_write = os.pipe()
        # Chromium reads commands on fd 3 and writes answers on fd 4.
        def child_fds():
            # Through fresh descriptors first: a pipe end may itself be 3 or 4.
            read_end, write_end = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
            preexec_fn=child_fds, pass_fds=(3, 4, to_browser_read, from_browser_write),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_read)
        os.close(from_browser_write)
        self.next_id = 0
        self.buffer = b""
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self.read()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("the browser closed the pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method, session):
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    del self.events[index]
                    return event
            self.events.append(self.read())

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        self.process.wait(timeout=20)


def main():
    chromium, url, outdir, widths = sys.argv[1], sys.argv[2], sys.argv[3], [int(w) for w in sys.argv[4:]]
    browser = Browser(chromium)
    try:
        for width in widths:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}, session)
            browser.send("Page.enable", {}, session)
            browser.send("Page.navigate", {"url": url}, session)
            browser.wait_for("Page.loadEventFired", session)
            measured = browser.send("Runtime.evaluate", {"expression": MEASURE, "returnByValue": True}, session)
            result = json.loads(measured["result"]["value"])
            shot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session)
            path = os.path.join(outdir, f"page-{width}.png")
            with open(path, "wb") as file:
                file.write(base64.b64decode(shot["data"]))
            result.update({"width": width, "screenshot": path})
            print(json.dumps(result), flush=True)
            browser.send("Target.closeTarget", {"targetId": target})
    finally:
        browser.close()


if __name__ == "__main__":
    main()
