#!/usr/bin/env python3
"""The inspector in a real browser: headless Chromium driven by Selenium (chromium-driver).

    scripts/check-inspector.py BASE_URL ADMIN_TOKEN SCREENSHOT_FOLDER

Against a running server: opens /inspector/, enters the admin token, sees a session appear live
after pushes made with curl, opens it, checks its screens and resolved values (and which screen
each comes from), sees a live push arrive, drags the scrubber back to revision 1 and sees that
revision's values, steps forward, clicks a preference.published event and follows its walk,
exports, forks, imports, checks a session with a tab and a sheet (the stacks as a tree, a value
inherited from the presenter, a return's walk through it, a tab selected live, the sheet at an
earlier revision), then a session of 1,000 screens and one of 100,000 events. Saves screenshots at a laptop
and a phone width. Fails on any error in the browser's console.

Over HTTPS (scripts/check-inspector.sh with CHECK_INSPECTOR_TLS=1): CHECK_INSPECTOR_CA names the
authority curl and Python trust, and CHECK_INSPECTOR_SPKI the server key's SPKI hash, which
Chromium is told to accept (its own trust store is the user's NSS database).
"""
import http.client
import json
import multiprocessing
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

BASE, ADMIN, SHOTS = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
os.makedirs(SHOTS, exist_ok=True)
started = time.monotonic()
CA = os.environ.get("CHECK_INSPECTOR_CA")
SPKI = os.environ.get("CHECK_INSPECTOR_SPKI")
TLS_CONTEXT = ssl.create_default_context(cafile=CA) if CA else None
CURL_TRUST = ["--cacert", CA] if CA else []


def step(message):
    print(f"check-inspector: [{time.monotonic() - started:5.1f}s] {message}", flush=True)


def curl(method, path, token=None, body=None):
    """A request made with curl, as a person would from a terminal."""
    command = ["curl", "-sS", "--fail-with-body", *CURL_TRUST, "-X", method, BASE + path]
    if token:
        command += ["-H", f"Authorization: Bearer {token}"]
    if body is not None:
        command += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output) if output.strip() else None


def request(method, path, token, body=None):
    """Bulk set-up without a process per request."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(BASE + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, context=TLS_CONTEXT) as response:
        text = response.read()
        return json.loads(text) if text else None


def patch_many(arguments):
    """One of the writers of the 100,000-event session: `count` value changes on its root."""
    port, session, token, writer, count = arguments
    if TLS_CONTEXT:
        connection = http.client.HTTPSConnection("127.0.0.1", port, context=TLS_CONTEXT)
    else:
        connection = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    for index in range(count):
        body = json.dumps({"n": index * 4 + writer})
        connection.request("PATCH", f"/v1/sessions/{session}/screens/root/values", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status


def many_events(count):
    """A session of `count` events (the first is its creation), written by four processes."""
    created = request("POST", "/v1/sessions", None, {"root": {"name": "Busy"}})
    port = int(BASE.rsplit(":", 1)[1])
    writers = 4
    share = (count - 1) // writers
    jobs = [(port, created["id"], created["token"], writer, share + (1 if writer < (count - 1) % writers else 0))
            for writer in range(writers)]
    with multiprocessing.Pool(writers) as pool:
        pool.map(patch_many, jobs)
    return created["id"]


options = webdriver.ChromeOptions()
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1440,900", "--force-device-scale-factor=1", "--lang=en-US"]:
    options.add_argument(argument)
if SPKI:
    options.add_argument(f"--ignore-certificate-errors-spki-list={SPKI}")
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
wait = WebDriverWait(driver, 20, poll_frequency=0.05,
                     ignored_exceptions=[StaleElementReferenceException])


def until(what, condition, timeout=20):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05,
                             ignored_exceptions=[StaleElementReferenceException]).until(lambda _: condition())
    except TimeoutException:
        driver.save_screenshot(os.path.join(SHOTS, "failure.png"))
        raise AssertionError(f"timed out waiting for {what}; screenshot in {SHOTS}/failure.png")


def text(selector):
    return driver.find_element(By.CSS_SELECTOR, selector).text


def present(selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def resolved(key):
    """The selected screen's resolved `key`: (value, source screen)."""
    rows = present(f'#screen-detail tr[data-key="{key}"]')
    rows = [row for row in rows if row.find_elements(By.CSS_SELECTOR, "td.source")]
    if not rows:
        return None
    return rows[0].find_element(By.CSS_SELECTOR, "td.value").text, rows[0].get_attribute("data-source")


def select_screen(name):
    row = until(f"a stack row {name}", lambda: next(iter(present(f'#stack-list .stack-row[data-name="{name}"]')), None))
    row.click()
    until(f"the detail of {name}", lambda: text("#detail-name") == name)


def revision():
    return int(text("#revision-label"))


try:
    step("open the page and enter the admin token")
    driver.get(BASE + "/inspector/")
    until("the login form", lambda: present("#token") and present("#token")[0].is_displayed())
    driver.find_element(By.ID, "token").send_keys(ADMIN)
    driver.find_element(By.ID, "connect").click()
    until("the app", lambda: present("#app") and present("#app")[0].is_displayed())
    until("the live stream of every session", lambda: driver.find_element(By.ID, "status").get_attribute("data-state") == "live")

    step("a session made with curl appears live")
    schema = {"values": {"title": {"type": "string", "default": "initial"}},
              "preferences": {"pick": {"type": "string", "default": ""}}}
    created = curl("POST", "/v1/sessions", body={"root": {"name": "Home"}, "schema": schema})
    sid, token = created["id"], created["token"]
    until("the new session in the list", lambda: present(f'#sessions-list .session-row[data-id="{sid}"]'))
    base = f"/v1/sessions/{sid}"
    curl("PATCH", f"{base}/screens/root/values", token, {"title": "Hello"})       # 2
    curl("POST", f"{base}/push", token, {"name": "Detail"})                        # 3
    curl("PATCH", f"{base}/screens/top/values", token, {"title": "Deep"})          # 4
    curl("PUT", f"{base}/screens/root/handlers/pick", token, {"passBack": True})   # 5
    curl("PUT", f"{base}/screens/top/handlers/pick", token, {"passBack": False})   # 6
    curl("POST", f"{base}/push", token, {"name": "Picker"})                        # 7
    curl("POST", f"{base}/screens/top/preferences/pick", token, {"value": "blue"})  # 8
    until("the pushes counted live", lambda: present(f'#sessions-list .session-row[data-id="{sid}"]')[0]
          .find_elements(By.CSS_SELECTOR, "span")[1].text == "8")

    step("open it: its screens and resolved values")
    present(f'#sessions-list .session-row[data-id="{sid}"]')[0].click()
    until("three screens", lambda: len(present("#stack-list .stack-row")) == 3)
    until("revision 8 shown", lambda: revision() == 8)
    select_screen("Picker")
    until("title from Detail", lambda: resolved("title") == ('"Deep"', "Detail"))
    select_screen("Home")
    until("title from Home", lambda: resolved("title") == ('"Hello"', "Home"))
    until("the session's stream", lambda: driver.find_element(By.ID, "status").get_attribute("data-state") == "live")

    step("a push made now shows up live")
    curl("POST", f"{base}/push", token, {"name": "Extra"})                          # 9
    until("four screens", lambda: len(present("#stack-list .stack-row")) == 4)
    until("revision 9 shown", lambda: revision() == 9 and text("#version-label") == "9")

    step("drag the scrubber to the first revision")
    scrubber = driver.find_element(By.ID, "scrubber")
    ActionChains(driver).click_and_hold(scrubber).move_by_offset(-scrubber.size["width"] // 2 - 20, 0).release().perform()
    until("revision 1", lambda: revision() == 1)
    until("one screen", lambda: len(present("#stack-list .stack-row")) == 1)
    select_screen("Home")
    until("the default title at revision 1", lambda: resolved("title") == ('"initial"', "default"))
    assert driver.find_element(By.ID, "live").get_attribute("aria-pressed") == "false"
    scrubber.send_keys(Keys.ARROW_RIGHT)
    until("revision 2", lambda: revision() == 2)
    until("the title set at revision 2", lambda: resolved("title") == ('"Hello"', "Home"))
    until("the change from revision 1", lambda: "/screens/0/values/title" in text("#change-ops"))

    step("click the publish in the event log and follow its walk")
    until("event 8 in the log", lambda: present('#events-list .event-row[data-seq="8"]') and
          "preference.published" in present('#events-list .event-row[data-seq="8"]')[0].text)
    present('#events-list .event-row[data-seq="8"]')[0].click()
    until("revision 8", lambda: revision() == 8)
    until("the walk", lambda: present("#walk") and present("#walk")[0].is_displayed())
    steps = [(item.get_attribute("data-state"), item.text) for item in present("#walk-steps .walk-step")]
    assert [state for state, _ in steps] == ["transparent", "stopped", "unreached"], steps
    assert steps[0][1].startswith("Picker") and steps[1][1].startswith("Detail") and steps[2][1].startswith("Home"), steps
    assert "blue" in steps[1][1], steps
    select_screen("Detail")
    prefs = present('#screen-detail tr[data-key="pick"]')
    assert any('"blue"' in row.text for row in prefs), [row.text for row in prefs]
    # The walk that brought it, from the server's explanation: Picker published, Detail stopped it.
    until("Detail's pick came from Picker", lambda: any(
        "from Picker via 1 hop" in row.text for row in present('#screen-detail tr[data-key="pick"]')))
    driver.save_screenshot(os.path.join(SHOTS, "inspector-laptop.png"))

    step("play from revision 8 to the end at 25 events a second")
    driver.find_element(By.CSS_SELECTOR, '#speed option[value="25"]').click()
    driver.find_element(By.ID, "play").click()
    until("the end of the history", lambda: revision() == 9)
    until("live again", lambda: driver.find_element(By.ID, "live").get_attribute("aria-pressed") == "true")

    step("fork at revision 4 and open the fork")
    driver.find_element(By.CSS_SELECTOR, '#events-list .event-row[data-seq="4"]').click()
    until("revision 4", lambda: revision() == 4)
    driver.find_element(By.ID, "fork-button").click()
    until("the fork dialog", lambda: present("#created-id") and present("#created-id")[0].is_displayed())
    fork_id = text("#created-id")
    driver.find_element(By.ID, "dialog-open").click()
    until("the fork open", lambda: text("#session-title") == fork_id)
    until("the fork's two screens", lambda: len(present("#stack-list .stack-row")) == 2)
    until("the link to its origin", lambda: "forked from" in text("#session-origin"))
    forked = request("GET", f"/v1/sessions/{fork_id}", ADMIN)
    assert forked["origin"] == {"session": sid, "version": 4}, forked

    step("hand the fork off, and redeem its link as another device would")
    driver.find_element(By.ID, "handoff-button").click()
    until("the hand-off dialog", lambda: present("#handoff-code") and present("#handoff-code")[0].is_displayed())
    code = text("#handoff-code")
    assert code.startswith("h_") and len(code) == 38, code
    link = driver.find_element(By.ID, "handoff-link").get_attribute("href")
    assert link.endswith("#handoff=" + code), link
    driver.find_element(By.CSS_SELECTOR, '#dialog button[value="close"]').click()
    signed_in = driver.execute_script("return sessionStorage.getItem('nv.inspector')")
    driver.get(link)
    until("the fork open with the device's own token", lambda: text("#session-title") == fork_id
          and text("#who-text") == "session token")
    until("the fork's two screens again", lambda: len(present("#stack-list .stack-row")) == 2)
    device = json.loads(driver.execute_script("return sessionStorage.getItem('nv.inspector')"))
    assert device["tokens"][fork_id].startswith("td_"), device
    assert "handoff" not in driver.current_url, driver.current_url
    try:
        request("POST", "/v1/handoffs/redeem", None, {"code": code})
        raise AssertionError("a hand-off code was redeemed twice")
    except urllib.error.HTTPError as error:
        assert error.code == 409 and json.loads(error.read())["type"] == "/problems/handoff-code-used"
    driver.execute_script("sessionStorage.setItem('nv.inspector', arguments[0])", signed_in)
    driver.get(f"{BASE}/inspector/#{fork_id}")
    driver.refresh()
    until("signed in with the admin token again", lambda: text("#who-text") == "every session"
          and text("#session-title") == fork_id)

    step("export, then import the file as a new session")
    exported = subprocess.run(["curl", "-sS", "--fail", *CURL_TRUST, "-H", f"Authorization: Bearer {ADMIN}",
                               f"{BASE}{base}/export"], check=True, capture_output=True).stdout
    path = os.path.join(SHOTS, f"{sid}.ndjson")
    with open(path, "wb") as file:
        file.write(exported)
    driver.find_element(By.ID, "import-file").send_keys(path)
    until("the import dialog", lambda: present("#created-id") and present("#created-id")[0].is_displayed()
          and text("#created-id") not in (fork_id, ""))
    imported_id = text("#created-id")
    driver.find_element(By.ID, "dialog-open").click()
    until("the import open", lambda: text("#session-title") == imported_id and revision() == 9)
    until("its four screens", lambda: len(present("#stack-list .stack-row")) == 4)
    os.remove(path)

    step("a session with a tab and a sheet: its stacks as a tree")
    multi = curl("POST", "/v1/sessions", body={"root": {"name": "Home", "values": {"title": "home"}}, "schema": schema})
    mid, mtoken = multi["id"], multi["token"]
    mbase = f"/v1/sessions/{mid}"
    curl("POST", f"{mbase}/push", mtoken, {"name": "Detail", "values": {"title": "detail"}})        # 2
    curl("POST", f"{mbase}/stacks", mtoken, {"id": "search", "root": {"name": "Search"}})           # 3
    curl("PUT", f"{mbase}/screens/top/handlers/pick", mtoken, {"passBack": True})                   # 4
    sheet = curl("POST", f"{mbase}/present", mtoken, {"style": "sheet", "root": {"name": "Filter"}})["stack"]["id"]  # 5
    curl("POST", f"{mbase}/stacks/{sheet}/push", mtoken, {"name": "Options"})                        # 6
    curl("POST", f"{mbase}/screens/top/return", mtoken, {"key": "pick", "value": "red"})            # 7
    until("the multi-stack session in the list", lambda: present(f'#sessions-list .session-row[data-id="{mid}"]'))
    present(f'#sessions-list .session-row[data-id="{mid}"]')[0].click()
    until("it open at revision 7", lambda: text("#session-title") == mid and revision() == 7)
    until("three stacks in the tree", lambda: len(present("#stack-picker .stack-node")) == 3)
    nodes = [(node.get_attribute("data-stack"), node.get_attribute("data-kind"), node.get_attribute("data-depth"))
             for node in present("#stack-picker .stack-node")]
    assert [(stack, kind) for stack, kind, _ in nodes] == [("main", "main"), (sheet, "sheet"), ("search", "tab")], nodes
    assert [depth for _, _, depth in nodes] == ["0", "1", "0"], nodes
    until("the sheet shown (what a user sees)", lambda: [row.get_attribute("data-name") for row in present("#stack-list .stack-row")] == ["Filter"])
    select_screen("Filter")
    until("title from Detail", lambda: resolved("title") == ('"detail"', "Detail"))
    step("the return in the log and its walk through the presenter")
    until("event 7 in the log", lambda: present('#events-list .event-row[data-seq="7"]') and
          "screen.returned" in present('#events-list .event-row[data-seq="7"]')[0].text)
    present('#events-list .event-row[data-seq="7"]')[0].click()
    until("the walk of the return", lambda: present("#walk") and present("#walk")[0].is_displayed() and
          [item.get_attribute("data-state") for item in present("#walk-steps .walk-step")] ==
          ["gone", "transparent", "received", "transparent", "unreached"])
    driver.save_screenshot(os.path.join(SHOTS, "inspector-laptop-stacks.png"))
    step("a tab selected now arrives live; the tab shares nothing with the main stack")
    curl("POST", f"{mbase}/select", mtoken, {"stack": "search"})                                     # 8
    until("revision 8 shown", lambda: revision() == 8)
    until("search marked selected", lambda: "selected" in driver.find_element(
        By.CSS_SELECTOR, '#stack-picker .stack-node[data-stack="search"]').text)
    driver.find_element(By.CSS_SELECTOR, '#stack-picker .stack-node[data-stack="search"]').click()
    until("the tab's screens", lambda: [row.get_attribute("data-name") for row in present("#stack-list .stack-row")] == ["Search"])
    until("the tab's own default title", lambda: resolved("title") == ('"initial"', "default"))
    step("back to revision 6: the sheet held Options then")
    driver.find_element(By.CSS_SELECTOR, '#events-list .event-row[data-seq="6"]').click()
    until("revision 6", lambda: revision() == 6)
    driver.find_element(By.CSS_SELECTOR, f'#stack-picker .stack-node[data-stack="{sheet}"]').click()
    until("the sheet's two screens at revision 6", lambda:
          [row.get_attribute("data-name") for row in present("#stack-list .stack-row")] == ["Filter", "Options"])

    step("a session of 1,000 screens")
    big = curl("POST", "/v1/sessions", body={"root": {"name": "Root", "values": {"title": "r"}}, "schema": schema})
    screens = [{"name": f"S{i}", "values": {"title": f"t{i}"} if i % 100 == 0 else {}} for i in range(1, 1000)]
    request("PUT", f"/v1/sessions/{big['id']}/path", big["token"], {"screens": screens})
    until("the big session in the list", lambda: present(f'#sessions-list .session-row[data-id="{big["id"]}"]'))
    present(f'#sessions-list .session-row[data-id="{big["id"]}"]')[0].click()
    until("the big session open", lambda: text("#session-title") == big["id"] and revision() == 2)
    rows = present("#stack-list .stack-row")
    assert 0 < len(rows) < 120, f"{len(rows)} rows in the page: the stack is not virtualised"
    until("the top screen selected", lambda: text("#detail-name") == "S999")
    until("title from S900", lambda: resolved("title") == ('"t900"', "S900"))

    events = int(os.environ.get("INSPECTOR_SCALE_EVENTS", "100000"))
    step(f"a session of {events:,} events (written now over HTTP)")
    busy = many_events(events)
    step("written; open it")
    driver.get(BASE + f"/inspector/#{busy}")
    until("the busy session open", lambda: text("#session-title") == busy and revision() == events, timeout=60)
    assert text("#events-count") == str(events)
    step("opened; drag the scrubber to the middle")
    scrubber = driver.find_element(By.ID, "scrubber")
    ActionChains(driver).click_and_hold(scrubber).move_by_offset(-20, 0).move_by_offset(20, 0).release().perform()
    until("a revision near the middle", lambda: abs(revision() - events // 2) < events // 10 and
          present('#screen-detail tr[data-key="n"]') and text("#change-event").startswith(f"#{revision()} "), timeout=60)
    middle = revision()
    expected = request("GET", f"/v1/sessions/{busy}/replay?at={middle}", ADMIN)["screens"][0]["resolved"]["n"]
    until(f"n at revision {middle}", lambda: resolved("n") == (json.dumps(expected), "Busy"))
    step(f"revision {middle} shown; scroll the event log to event 77,777 and click it")
    target = min(77777, events - 1)
    driver.execute_script("const list = document.getElementById('events-list');"
                          "list.scrollTop = (arguments[0] - 5) * parseFloat(getComputedStyle(list).getPropertyValue('--row'));",
                          target)
    until(f"event {target} loaded", lambda: present(f'#events-list .event-row[data-seq="{target}"]') and
          "values.updated" in present(f'#events-list .event-row[data-seq="{target}"]')[0].text, timeout=60)
    present(f'#events-list .event-row[data-seq="{target}"]')[0].click()
    until(f"revision {target}", lambda: revision() == target and text("#change-event").startswith(f"#{target} "), timeout=60)
    rows = len(present("#events-list .event-row"))
    assert 0 < rows < 150, f"{rows} event rows in the page: the log is not virtualised"
    step(f"revision {target} shown with {rows} event rows in the page")
    driver.save_screenshot(os.path.join(SHOTS, "inspector-laptop-100k-events.png"))

    step("at a phone's width")
    driver.set_window_size(390, 844)
    driver.get(BASE + f"/inspector/#{sid}")
    driver.refresh()  # a reload keeps the token (sessionStorage) and opens the session in the address
    until("the session tab", lambda: present("#stack-list .stack-row") and len(present("#stack-list .stack-row")) == 4)
    driver.find_element(By.CSS_SELECTOR, '#events-list')  # present, in another tab
    until("revision 9 on the phone", lambda: revision() == 9)
    driver.save_screenshot(os.path.join(SHOTS, "inspector-phone.png"))
    driver.find_element(By.CSS_SELECTOR, '.tab[data-panel="events"]').click()
    until("the event log on the phone", lambda: present('#events-list .event-row[data-seq="8"]'))
    present('#events-list .event-row[data-seq="8"]')[0].click()
    until("the walk on the phone", lambda: present("#walk") and present("#walk")[0].is_displayed() and revision() == 8)
    driver.save_screenshot(os.path.join(SHOTS, "inspector-phone-walk.png"))
    driver.find_element(By.CSS_SELECTOR, '.tab[data-panel="sessions"]').click()
    until("the sessions on the phone", lambda: present("#sessions-list .session-row") and
          present("#sessions-list .session-row")[0].is_displayed())
    driver.save_screenshot(os.path.join(SHOTS, "inspector-phone-sessions.png"))
    driver.set_window_size(1440, 900)
    driver.find_element(By.CSS_SELECTOR, f'#sessions-list .session-row[data-id="{sid}"]').click()
    until("the list and the session at a laptop's width", lambda: revision() == 9)
    driver.save_screenshot(os.path.join(SHOTS, "inspector-laptop-live.png"))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    driver.save_screenshot(os.path.join(SHOTS, "inspector-laptop-dark.png"))

    step("no errors in the console")
    problems = [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]
    assert not problems, "console errors:\n" + "\n".join(entry["message"] for entry in problems)
    step(f"ok; screenshots in {SHOTS}")
finally:
    driver.quit()
