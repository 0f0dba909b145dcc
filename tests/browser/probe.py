#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of check_report.sh (the headless-browser check of report.py's HTML page).

  probe.py inject PAGE OUT    OUT: PAGE with a script that, once the page has loaded, records in <body>'s
                              attributes how many images there are, which did not decode, and what was fetched
  probe.py verdict PAGE DOM   DOM: the browser's DOM of the probe; prints one line, exit 0 when every image of
                              PAGE rendered and nothing outside the page was fetched, else 1
  probe.py break PAGE OUT     OUT: PAGE with the first image's data cut short (the check's control)

The script goes into a copy only: the report itself runs no script."""
import html.parser
import re
import sys

PROBE = """<script>
window.addEventListener("load", function () {
  var broken = [];
  for (var i = 0; i < document.images.length; i++) {
    var img = document.images[i];
    if (!img.complete || img.naturalWidth === 0 || img.naturalHeight === 0) broken.push(img.alt || String(i));
  }
  var fetched = performance.getEntriesByType("resource").map(function (e) { return e.name; })
    .filter(function (name) { return name.indexOf("data:") !== 0; });
  document.body.setAttribute("data-images", String(document.images.length));
  document.body.setAttribute("data-broken", broken.join(" | "));
  document.body.setAttribute("data-fetched", fetched.join(" "));
  document.body.setAttribute("data-probe", "done");
});
</script>
"""


class Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(path):
    parser = Tags()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser.tags


def main(argv):
    if len(argv) != 4 or argv[1] not in ("inject", "verdict", "break"):
        print("probe.py: usage: probe.py inject|verdict|break PAGE OUT", file=sys.stderr)
        return 2
    command, page, out = argv[1:]
    with open(page, encoding="utf-8") as f:
        text = f.read()
    if command == "inject":
        if "</body>" not in text:
            print(f"probe.py: {page}: no </body> (allowed: an HTML page from report.py)", file=sys.stderr)
            return 2
        with open(out, "w", encoding="utf-8") as f:
            f.write(text.replace("</body>", PROBE + "</body>", 1))
        return 0
    if command == "break":
        # Keep the PNG's first bytes (a valid header) and drop the rest: the browser cannot decode it.
        broken, count = re.subn(r'(src="data:image/png;base64,[A-Za-z0-9+/]{64})[A-Za-z0-9+/=]*"', r'\1"', text,
                                count=1)
        if not count:
            print(f"probe.py: {page}: no embedded PNG to break", file=sys.stderr)
            return 2
        with open(out, "w", encoding="utf-8") as f:
            f.write(broken)
        return 0
    expected = sum(tag == "img" for tag, _ in tags(page))
    body = next((attrs for tag, attrs in tags(out) if tag == "body"), {})
    if body.get("data-probe") != "done":
        print(f"FAIL {page}: the page's load event never ran the probe (the browser did not finish loading it)")
        return 1
    problems = []
    if int(body.get("data-images", "0")) != expected:
        problems.append(f"{body.get('data-images')} images rendered of {expected} in the page")
    if expected == 0:
        problems.append("no images in the page")
    if body.get("data-broken"):
        problems.append(f"not decoded: {body['data-broken']}")
    if body.get("data-fetched"):
        problems.append(f"fetched from outside the page: {body['data-fetched']}")
    if problems:
        print(f"FAIL {page}: " + "; ".join(problems))
        return 1
    print(f"ok {page}: {expected} images, every one decoded; nothing fetched from outside the page")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
