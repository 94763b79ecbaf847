"""The built documentation site opens in a real browser without errors.

This test builds nothing: it checks ``docs/_build/html``, which
``python -m sphinx -W --keep-going -b html docs docs/_build/html`` writes (about two minutes, with the
gallery's examples executing).  Without a build it is skipped with that reason, and fails
under ``CI=true`` only when ``LATENTSTRUCT_DOCS_BUILT=1`` says the build ran first.  Without
Chromium (Debian: ``apt-get install chromium``, ``/usr/bin/chromium``) it is skipped.

Each page is opened in headless Chromium, driven over the DevTools protocol through
``--remote-debugging-pipe`` (file descriptors 3 and 4, JSON messages ending in NUL; no
package beyond the standard library).  The test collects what the browser's console would
show -- uncaught exceptions (``Runtime.exceptionThrown``), ``console.error`` calls and
browser log entries of level error, such as a stylesheet, script or image that failed to
load -- and asks the page for its images: every ``<img>`` must have loaded
(``complete`` and ``naturalWidth > 0``) from a file that exists on disk.  The pages: the
landing page, a user-guide page, the gallery's index (its thumbnails) and each example's
page.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

# the site is built (sphinx, every gallery example run) and opened in a browser: minutes
pytestmark = pytest.mark.slow

HTML = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"
CHROMIUM = "/usr/bin/chromium"
PAGE_TIMEOUT_S = 60  # a guard against a hang only (no answer at all); never a speed check
# after the load event: resolves once the page's own late scripts have run (two animation
# frames, then an idle period), so their errors are in the event stream before we look
SETTLED = ("new Promise(done => requestAnimationFrame(() => requestAnimationFrame("
           "() => requestIdleCallback(() => done(true)))))")


def _site() -> Path:
    if (HTML / "index.html").is_file():
        return HTML
    message = (f"the documentation site is not built ({HTML / 'index.html'} is missing): "
               f"python -m sphinx -W --keep-going -b html docs docs/_build/html")
    if os.environ.get("CI") == "true" and os.environ.get("LATENTSTRUCT_DOCS_BUILT") == "1":
        pytest.fail(message)
    pytest.skip(message)


def _chromium() -> str:
    path = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if not path:
        pytest.skip(f"headless Chromium is not installed ({CHROMIUM}; apt-get install chromium)")
    return path


class Browser:
    """Headless Chromium over the DevTools protocol on a pipe (one page, one session)."""

    def __init__(self, binary: str, profile: Path):
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def as_fds_3_and_4():  # the fds --remote-debugging-pipe reads and writes
            # via fds >= 10 first, so that neither dup2 closes the other pipe's end
            read_end = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
            write_end = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        args = [binary, "--headless", "--remote-debugging-pipe", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--mute-audio",
                f"--user-data-dir={profile}", "--window-size=1280,900", "about:blank"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, pass_fds=(3, 4),
                                     preexec_fn=as_fds_3_and_4)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=self.session)

    def _send(self, message: dict) -> None:
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")

    def _receive(self) -> dict:
        while b"\0" not in self._buffer:
            if not select.select([self._from_chrome], [], [], PAGE_TIMEOUT_S)[0]:
                raise TimeoutError(f"no answer from Chromium in {PAGE_TIMEOUT_S} s")
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit {self.proc.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._send(message)
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> bool:
        """Collect events until ``method`` arrives (True), or False when Chromium falls
        silent for ``PAGE_TIMEOUT_S``."""
        while True:
            try:
                event = self._receive()
            except TimeoutError:
                return False
            self.events.append(event)
            if event.get("method") == method:
                return True

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=self.session)
        assert self.wait_for("Page.loadEventFired"), f"{url} never loaded"
        assert self.evaluate(SETTLED) is True

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=self.session)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """What the console would show as errors since the last ``open``."""
        out = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                text = details.get("exception", {}).get("description") or details.get("text")
                out.append(f"uncaught exception: {text} ({details.get('url', '')}:"
                           f"{details.get('lineNumber', '?')})")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                args = " ".join(str(a.get("value", a.get("description", "")))
                                for a in params["args"])
                out.append(f"console.{params['type']}: {args}")
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                entry = params["entry"]
                out.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}")
        return out

    def close(self) -> None:
        try:
            self._send({"id": 0, "method": "Browser.close"})
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        finally:
            os.close(self._to_chrome)
            os.close(self._from_chrome)


@pytest.fixture(scope="module")
def site() -> Path:
    return _site()


@pytest.fixture(scope="module")
def browser(site, tmp_path_factory):
    b = Browser(_chromium(), tmp_path_factory.mktemp("chromium-profile"))
    yield b
    b.close()


IMAGES = ("Array.from(document.images).map(i => "
          "({src: i.currentSrc || i.src, complete: i.complete, width: i.naturalWidth}))")


def _pages(site: Path) -> list[str]:
    gallery = site / "auto_examples"
    examples = sorted(p.relative_to(site).as_posix() for p in gallery.glob("*.html")
                      if p.name not in ("index.html", "sg_execution_times.html"))
    return ["index.html", "guide/getting_started.html", "auto_examples/index.html", *examples]


def _check_page(browser: Browser, site: Path, page: str) -> list[dict]:
    path = site / page
    assert path.is_file(), f"{page} is missing from the built site"
    browser.open(path.as_uri())
    assert not browser.errors(), f"{page}: console errors:\n" + "\n".join(browser.errors())
    images = browser.evaluate(IMAGES)
    for image in images:
        src = urlparse(image["src"])
        assert src.scheme == "file", f"{page}: image from outside the site: {image['src']}"
        assert Path(unquote(src.path)).is_file(), f"{page}: image file missing: {image['src']}"
        assert image["complete"] and image["width"] > 0, f"{page}: image did not load: {image}"
    return images


@pytest.mark.slow
def test_site_pages_have_no_console_errors_and_their_images_load(site, browser):
    for page in _pages(site):
        _check_page(browser, site, page)


def test_gallery_shows_every_example_with_its_thumbnail(site, browser):
    examples = sorted(p.stem for p in (site.parents[2] / "examples").glob("*.py"))
    assert examples, "no examples/*.py"
    images = _check_page(browser, site, "auto_examples/index.html")
    names = {Path(unquote(urlparse(i["src"]).path)).name for i in images}
    for stem in examples:
        assert (site / "auto_examples" / f"{stem}.html").is_file(), f"no gallery page for {stem}.py"
        assert f"sphx_glr_{stem}_thumb.png" in names, f"no thumbnail of {stem}.py in the gallery"


def test_browser_check_sees_a_broken_page(site, browser, tmp_path):
    """The check itself works: a page with an uncaught error and a missing image fails it."""
    page = tmp_path / "broken.html"
    page.write_text("<html><body><img src='missing.png'>"
                    "<script>throw new Error('boom')</script></body></html>", encoding="utf-8")
    browser.open(page.as_uri())
    errors = "\n".join(browser.errors())
    assert "boom" in errors and "missing.png" in errors, errors
    assert browser.evaluate(IMAGES)[0]["width"] == 0


# the API reference's class pages list their methods, inherited ones included (Tagger's come
# from latentstruct.estimators.Estimator), without scikit-learn's metadata-routing methods
API_METHODS = {
    "latentstruct.Tagger": ("fit", "partial_fit", "predict", "predict_marginals", "score",
                            "save", "get_params", "set_params"),
    "latentstruct.crfsuite.CRF": ("fit", "predict", "predict_marginals", "score",
                                  "get_params", "set_params"),
    "latentstruct.featurizers.SpacyVectors": ("fit", "transform", "fit_transform",
                                              "get_params", "set_params"),
}
SKLEARN_ROUTING = ("set_fit_request", "set_partial_fit_request", "set_score_request",
                   "get_metadata_routing")


def test_api_class_pages_list_their_methods(site):
    for name, methods in API_METHODS.items():
        page = site / "generated" / f"{name}.html"
        assert page.is_file(), f"generated/{name}.html is missing from the built site"
        text = page.read_text(encoding="utf-8")
        missing = [m for m in methods if f'id="{name}.{m}"' not in text]
        assert not missing, f"{page.name} does not document {', '.join(missing)}"
        routing = [m for m in SKLEARN_ROUTING if f'id="{name}.{m}"' in text]
        assert not routing, f"{page.name} documents scikit-learn's {', '.join(routing)}"
