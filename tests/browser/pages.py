"""Helpers for the page-by-page browser tests: axe-core (vendored here, never from a CDN), the
sideways-scroll check, screenshots into a folder CI keeps, and keyboard-only moves."""

import os
import re
from pathlib import Path

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"))
WIDTHS = {"desktop": (1280, 800), "phone": (390, 844)}
BLOCKING = ("serious", "critical")


def new_page(browser, width: str, *, dialogs=None):
    """A page at one of the two widths, with axe-core loaded into every document before its own
    scripts (an init script, so the pages' CSP stays as strict as in production). Dialogs (the
    confirm steps) are accepted unless `dialogs` handles them."""
    w, h = WIDTHS[width]
    context = browser.new_context(viewport={"width": w, "height": h})
    context.add_init_script(path=str(AXE))
    page = context.new_page()
    page.on("dialog", dialogs or (lambda dialog: dialog.accept()))
    return context, page


def axe_violations(page) -> list[str]:
    """Serious and critical axe-core violations on the page as it is now (open shadow roots, such as
    the website chat's, included)."""
    page.wait_for_function("() => typeof window.axe !== 'undefined'")
    result = page.evaluate(
        """async () => {
            const r = await window.axe.run(document, {resultTypes: ["violations"]});
            return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + " :: " + (n.failureSummary || "").split("\\n").slice(0, 2).join(" "))}));
        }"""
    )
    return [f"{v['impact']} {v['id']}: {v['help']} -> {v['nodes']}" for v in result if v["impact"] in BLOCKING]


def sideways_overflow(page) -> int:
    """How many pixels the page is wider than the window (0: no sideways scroll)."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


def shoot(page, width: str, name: str) -> Path:
    folder = SCREENSHOTS / width
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{re.sub(r'[^a-z0-9-]+', '-', name.lower())}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def check_page(page, width: str, name: str, problems: list[str]) -> None:
    """axe-core, no sideways scroll on a phone, and a screenshot."""
    for violation in axe_violations(page):
        problems.append(f"[{width}] {name}: {violation}")
    over = sideways_overflow(page)
    if over > 0:
        problems.append(f"[{width}] {name}: scrolls sideways by {over}px")
    shoot(page, width, name)


def deep_active(page) -> str:
    """A description of the focused element, looking inside shadow roots."""
    return page.evaluate(
        """() => {
            let el = document.activeElement;
            while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
            if (!el) return "";
            return [el.tagName.toLowerCase(), el.getAttribute("data-testid") || "", el.getAttribute("data-an") || "",
                    el.getAttribute("name") || "", el.id || "", (el.textContent || "").trim().slice(0, 40)].join("|");
        }"""
    )


def tab_to(page, predicate, *, limit: int = 120, backwards: bool = False) -> str:
    """Press Tab (only the keyboard) until the focused element's description satisfies
    `predicate`; fails after `limit` presses."""
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        focused = deep_active(page)
        if predicate(focused):
            return focused
    raise AssertionError(f"never reached the element by Tab; last focus: {deep_active(page)}")
