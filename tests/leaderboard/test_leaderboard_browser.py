"""The leaderboard app in a browser: `praib leaderboard app` served on a loopback port and driven by Selenium
in headless Chromium (Debian's chromium and chromium-driver): a row per submission, the venue filter, a
submission filed through the Submit tab, processed, and shown after a reload."""

from __future__ import annotations

import importlib.util
import shutil
import socket
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from tests.leaderboard.boards import demo_rows, demo_submission, process_args, requests, start_praib, \
    write_submission
from tests.leaderboard.report_page import CHROMIUM

CHROMEDRIVER = Path("/usr/bin/chromedriver")
pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("gradio") is None, reason="the app needs gradio (praib[app])"),
    pytest.mark.skipif(importlib.util.find_spec("selenium") is None, reason="the browser test drives Selenium"),
    pytest.mark.skipif(not CHROMIUM.exists() or not CHROMEDRIVER.exists(),
                       reason="the browser test needs Debian's chromium and chromium-driver (/usr/bin)"),
]
PAGE_TIMEOUT = 90


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def served(tmp_path):
    """Three processed submissions (one reviewed ICLR papers only) and the app over them."""
    queue, results = tmp_path / "queue", tmp_path / "results"
    iclr_only = [r for r in demo_rows("a", "guidelines") if r["venue"] == "ICLR"]
    for folder in (demo_submission(tmp_path / "in" / "model-a", "a"), demo_submission(tmp_path / "in" / "model-b", "b"),
                   write_submission(tmp_path / "in" / "iclr-only", iclr_only)):
        invoke("leaderboard", "submit", folder, "--queue", queue)
    invoke(*process_args(queue, results))
    port = free_port()
    app = start_praib("leaderboard", "app", results, "--queue", queue, "--port", port,
                      env={"GRADIO_ANALYTICS_ENABLED": "False"})
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + PAGE_TIMEOUT
    while True:
        try:
            urllib.request.urlopen(url, timeout=5)
            break
        except OSError:
            if app.poll() is not None or time.monotonic() > deadline:
                app.kill()
                pytest.fail(f"the app did not serve: {app.communicate()}")
            time.sleep(0.5)
    yield {"url": url, "queue": queue, "results": results, "tmp": tmp_path}
    app.terminate()
    app.wait(timeout=30)


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                     f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()


def table_rows(driver) -> list[str]:
    """The first cell of each row of the leaderboard table, as the page shows it (Gradio's Dataframe draws
    its body as rows of grid cells)."""
    return driver.execute_script("""
        return [...document.querySelectorAll('#leaderboard [role=row]')]
            .map(row => (row.querySelector('[role=gridcell]') || {}).innerText || '').map(text => text.trim())
            .filter(text => text);""")


def wait_for_rows(driver, predicate, what: str) -> list[str]:
    from selenium.webdriver.support.ui import WebDriverWait

    shown = []

    def ready(d):
        shown[:] = table_rows(d)
        return predicate(shown)

    try:
        WebDriverWait(driver, PAGE_TIMEOUT, poll_frequency=0.25).until(ready)
    except Exception:
        pytest.fail(f"{what}: the table shows {shown}")
    return list(shown)


def choose(driver, label: str, option: str) -> None:
    """Pick ``option`` in the Gradio dropdown labelled ``label``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    driver.find_element(By.CSS_SELECTOR, f'input[aria-label="{label}"]').click()
    # An option's text carries the check mark of the chosen one ("✓ all").
    WebDriverWait(driver, PAGE_TIMEOUT).until(expected_conditions.element_to_be_clickable(
        (By.XPATH, f'//ul[@role="listbox"]/li[@role="option"][contains(., "{option}")]')))
    next(item for item in driver.find_elements(By.XPATH, '//ul[@role="listbox"]/li[@role="option"]')
         if item.text.replace("✓", "").strip() == option).click()


def test_the_app_shows_filters_files_and_after_processing_shows_a_new_submission(served, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(served["url"])
    everyone = {"human (reference)", "model-a", "model-b", "iclr-only"}
    rows = wait_for_rows(browser, lambda rows: set(rows) == everyone, "a row per submission")
    assert sorted(rows) == sorted(everyone)

    choose(browser, "Venue", "NeurIPS")
    rows = wait_for_rows(browser, lambda rows: "iclr-only" not in rows and rows, "the NeurIPS rows")
    assert sorted(rows) == ["human (reference)", "model-a", "model-b"]

    browser.find_element(By.XPATH, '//button[@role="tab" and normalize-space(.)="Submit"]').click()
    field = WebDriverWait(browser, PAGE_TIMEOUT).until(expected_conditions.visibility_of_element_located(
        (By.CSS_SELECTOR, "#submission-source textarea, #submission-source input")))

    def submit(folder: Path) -> str:
        field.clear()
        field.send_keys(str(folder))
        before = browser.find_element(By.CSS_SELECTOR, "#submit-outcome").text
        browser.find_element(By.CSS_SELECTOR, "#submit-button").click()
        # While it runs, Gradio shows "processing | 0.3s" in the outcome's place.
        WebDriverWait(browser, PAGE_TIMEOUT).until(lambda d: (lambda text: text != before and text.startswith(
            ("Filed", "Not filed")))(d.find_element(By.CSS_SELECTOR, "#submit-outcome").text))
        return " ".join(browser.find_element(By.CSS_SELECTOR, "#submit-outcome").text.split())

    # One of the demo's guidelines reviews of model b does not parse (1 of 8): refused, with the problem shown.
    refused = submit(demo_submission(tmp_path / "in" / "unparsed", "b", "guidelines"))
    assert refused.startswith("Not filed.") and "problem: parse rate: 1 of 8 reviews (12.5%) did not parse" in refused
    assert "unparsed" not in requests(served["queue"])

    outcome = submit(demo_submission(tmp_path / "in" / "late-entry", "a", "guidelines"))
    assert outcome.startswith("Filed late-entry (demo-model-a, 8 reviews) as PENDING"), outcome
    assert requests(served["queue"])["late-entry"]["status"] == "PENDING"
    WebDriverWait(browser, PAGE_TIMEOUT).until(
        lambda d: "late-entry" in d.find_element(By.CSS_SELECTOR, "#queue").text)
    assert "PENDING" in browser.find_element(By.CSS_SELECTOR, "#queue").text

    invoke(*process_args(served["queue"], served["results"], "--once"))
    assert requests(served["queue"])["late-entry"]["status"] == "FINISHED"
    browser.refresh()
    rows = wait_for_rows(browser, lambda rows: "late-entry" in rows, "the processed submission after a reload")
    assert sorted(rows) == sorted(everyone | {"late-entry"})
