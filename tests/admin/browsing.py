"""Headless Chromium, driven by Selenium, for the admin's browser tests and the
screenshots in docs/img/ (`make screenshots`): Debian's chromium and chromium-driver,
which .ci/run installs. Without them the tests that use it are skipped, and say why."""

import os
import shutil
import time
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = Path(settings.BASE_DIR) / "docs" / "img"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # The same picture on every run: fixed size, scale and colours, no scrollbars.
    "--window-size=1440,900",
    "--force-device-scale-factor=1",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
]

# The marks of a test that drives the browser against the live server.
BROWSER_TEST = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason=f"no headless browser: install Debian's chromium and chromium-driver "
        f"({CHROMIUM}, {CHROMEDRIVER}); .ci/run does with apt-get",
    ),
]


def start_browser(language: str = "en-US"):
    """A headless Chromium whose user prefers `language` (its Accept-Language)."""
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--lang={language}"]:
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options
    )
    driver.set_page_load_timeout(30)
    return driver


def screenshot(driver, name: str) -> None:
    """docs/img/<name>, when WRITE_SCREENSHOTS is set (`make screenshots`): the tests
    visit the same pages every run, but rewrite the pictures only when asked, since a
    native select's edge may come out a row of pixels different from one run to the
    next."""
    if not os.environ.get("WRITE_SCREENSHOTS"):
        return
    from selenium.webdriver.support.ui import WebDriverWait

    # The page done (its scripts focus the first field), then no caret or focus ring.
    WebDriverWait(driver, 10).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )
    driver.execute_script(
        "document.documentElement.style.caretColor = 'transparent';"
        "document.activeElement && document.activeElement.blur()"
    )
    # Every transition at its end (a button's border fading in differed between runs), and
    # two frames painted since.
    driver.execute_async_script(
        "const style = document.createElement('style');"
        "style.textContent = '*, *::before, *::after {transition: none !important;"
        " animation: none !important}';"
        "document.head.appendChild(style);"
        "requestAnimationFrame(() => requestAnimationFrame(arguments[0]));"
    )
    time.sleep(0.3)  # the form controls' edges, painted a little later
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / name
    driver.save_screenshot(str(target.with_suffix(".tmp.png")))
    shutil.move(target.with_suffix(".tmp.png"), target)


def log_in(browser, live_server, username: str = "alice") -> None:
    """Log in through the admin's form and wait until the logged-in header shows: the
    login page has the header's site name too, so waiting for that could go on before
    the session cookie was set."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.admin.conftest import PASSWORD

    browser.get(f"{live_server.url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    WebDriverWait(browser, 10).until(seen.presence_of_element_located((By.ID, "logout-form")))
