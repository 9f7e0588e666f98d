/**
 * The dashboard in a real browser: headless Chromium from Debian (/usr/bin/chromium) driven by
 * playwright-core. Saves a screenshot of each page to tests/screenshots/ (git-ignored).
 */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import { startServer } from "./test_server.ts";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = new URL("./screenshots/", import.meta.url);
const OFFERS = "/v1/products/offers?asin=B07H57DNVV";

async function launch(): Promise<Browser> {
  try {
    await Deno.stat(CHROMIUM);
  } catch {
    throw new Error(
      `dashboard_browser_test needs Chromium at ${CHROMIUM}: install it with 'apt-get install -y chromium' (.ci/run does so)`,
    );
  }
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

async function shot(page: Page, name: string) {
  await Deno.mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

/** No horizontal scrolling: the page fits the viewport's width. */
async function fitsWidth(page: Page) {
  // Evaluated in the page, hence a string: Deno's type check has no DOM.
  const { scroll, width } = await page.evaluate<{ scroll: number; width: number }>(
    "({ scroll: document.documentElement.scrollWidth, width: innerWidth })",
  );
  assert.ok(scroll <= width, `page is ${scroll}px wide in a ${width}px viewport`);
}

Deno.test("dashboard in Chromium: sign up, create a key shown once, use it, see usage, revoke it", async () => {
  await using s = await startServer();
  const browser = await launch();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(e.message));

    await page.goto(`${s.url}/dashboard`);
    assert.match(page.url(), /\/dashboard\/signin$/);
    await shot(page, "01-signin");
    await page.click("text=Sign up");
    const email = `browser${Date.now()}@example.com`;
    await page.fill("#email", email);
    await page.fill("#password", "correct horse battery");
    await shot(page, "02-signup");
    await page.click("button[type=submit] >> text=Create account");
    await page.waitForURL(/\/dashboard\/keys$/);
    assert.equal(
      await page.evaluate<string>("document.cookie"),
      "",
      "the session cookie is not readable from script",
    );
    assert.equal(await page.locator("#keys tbody tr[data-key-id]").count(), 0);
    await shot(page, "03-keys-empty");

    await page.fill("#name", "ci");
    await page.selectOption("#mode", "test");
    await page.click("text=Create key");
    const value = await page.inputValue("#new-key-value");
    assert.match(value, /^shelf_test_[0-9a-f]{48}$/);
    assert.match(await page.textContent("#new-key") ?? "", /shown only this once/);
    const copy = page.locator("button[data-copy]");
    assert.ok(await copy.isVisible(), "the copy button's script ran under the CSP");
    await copy.click();
    // The label changes after the clipboard write resolves, so wait for it rather than race it.
    await page.waitForFunction(
      `document.querySelector("button[data-copy]")?.textContent === "Copied"`,
      null,
      {
        timeout: 5_000,
      },
    ).catch(() => {});
    assert.equal(await copy.textContent(), "Copied");
    await shot(page, "04-key-created");

    await page.goto(`${s.url}/dashboard/keys`);
    await page.reload();
    assert.ok(!(await page.content()).includes(value), "the key value is not shown again");
    assert.equal(await page.locator("#new-key-value").count(), 0);
    const row = page.locator("#keys tbody tr[data-key-id]");
    assert.equal(await row.count(), 1);
    const rowText = await row.textContent() ?? "";
    assert.ok(rowText.includes(`${value.slice(0, 15)}…${value.slice(-4)}`), rowText);
    assert.match(rowText, /test/);
    assert.equal((await row.locator(".last-used").textContent())?.trim(), "never");

    await page.goto(`${s.url}/dashboard/usage`);
    assert.equal(await page.textContent("#used"), "0");

    const call = await s.get(OFFERS, value);
    assert.equal(call.status, 200);
    await call.body?.cancel();

    await page.goto(`${s.url}/dashboard/keys`);
    assert.match(
      (await row.locator(".last-used").textContent()) ?? "",
      /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
    );
    await shot(page, "05-keys-used");
    await page.goto(`${s.url}/dashboard/usage`);
    assert.equal(await page.textContent("#used"), "1");
    assert.equal(await page.textContent("#remaining"), "49");
    assert.equal(await page.getAttribute("#credits", "value"), "1");
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(
      await page.getAttribute(`#daily-chart rect[data-day="${today}"]`, "data-count"),
      "1",
    );
    await shot(page, "06-usage");

    // The free plan allows one call a second, and the key made one this second perhaps.
    await new Promise((r) => setTimeout(r, 1_020 - (Date.now() % 1_000)));
    const watch = await s.get("/v1/watches", value, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        asin: "B07H57DNVV",
        every_seconds: 3600,
        webhook_url: "http://93.184.216.34/hook?token=secret-part",
        on: ["price", "rank"],
      }),
    });
    assert.equal(watch.status, 201);
    const watchId = (await watch.json()).id;
    await page.click("nav >> text=Watches");
    await page.waitForURL(/\/dashboard\/watches$/);
    const card = page.locator(`#${watchId}`);
    assert.match(await card.locator("h2").textContent() ?? "", /B07H57DNVV · US/);
    assert.match(await card.locator(".watch-status").textContent() ?? "", /active/);
    assert.match(await card.textContent() ?? "", /No webhook deliveries yet/);
    assert.ok(!(await page.content()).includes("secret-part"), "the webhook's query is not shown");
    await shot(page, "06b-watches");

    await page.goto(`${s.url}/dashboard/keys`);
    await page.click("text=Revoke…");
    assert.match(page.url(), /\/revoke$/);
    await shot(page, "07-revoke-confirm");
    await page.click("button >> text=Revoke key");
    await page.waitForURL(/\/dashboard\/keys\?revoked=1$/);
    assert.match(await row.locator(".status-revoked").textContent() ?? "", /revoked/);
    await shot(page, "08-keys-revoked");
    const refused = await s.get(OFFERS, value);
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, "unauthorized");

    await page.goto(`${s.url}/dashboard/settings`);
    assert.ok(await page.isChecked("input[name=at80]"), "alerts are on by default");
    await page.uncheck("input[name=at80]");
    await page.fill("#alert_email", "ops@example.com");
    await page.click("text=Save");
    await page.waitForURL(/saved=1$/);
    assert.equal(await page.isChecked("input[name=at80]"), false);
    assert.equal(await page.inputValue("#alert_email"), "ops@example.com");
    await shot(page, "09-settings");

    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
    });
    await phone.addCookies(await context.cookies());
    const small = await phone.newPage();
    for (
      const [path, name] of [
        ["keys", "10-phone-keys"],
        ["usage", "11-phone-usage"],
        ["watches", "11b-phone-watches"],
        ["settings", "12-phone-settings"],
      ]
    ) {
      await small.goto(`${s.url}/dashboard/${path}`);
      await fitsWidth(small);
      await shot(small, name);
    }
    await page.click("text=Sign out");
    await page.waitForURL(/\/dashboard\/signin\?signed_out=1$/);
    assert.deepEqual(problems, [], "no script or CSP errors in the console");
  } finally {
    await browser.close();
  }
});

Deno.test("dashboard in Chromium: reloading the page of a created key creates no second one", async () => {
  await using s = await startServer();
  const browser = await launch();
  try {
    const page = await (await browser.newContext()).newPage();
    const problems: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await page.goto(`${s.url}/dashboard/signup`);
    const email = `reload${Date.now()}@example.com`;
    await page.fill("#email", email);
    await page.fill("#password", "correct horse battery");
    await page.click("button[type=submit] >> text=Create account");
    await page.waitForURL(/\/dashboard\/keys$/);
    // A plan with room for more keys: on the free plan's one, a resend fails on the limit anyway.
    const [me] = (await s.accounts.list({ email })).accounts;
    await s.accounts.update(me.id, { plan: "starter" });
    await page.reload();

    await page.fill("#name", "once");
    await page.click("text=Create key");
    const value = await page.inputValue("#new-key-value");
    assert.match(value, /^shelf_live_[0-9a-f]{48}$/);
    // Chromium resends the form on reload without asking.
    const resent = await page.reload();
    assert.equal(resent?.request().method(), "POST", "the reload resent the form");
    assert.equal(resent?.status(), 409);
    assert.match(await page.textContent(".notice.error") ?? "", /this form was sent before/);
    assert.equal(await page.locator("#new-key-value").count(), 0);
    assert.equal(await page.locator("#keys tbody tr[data-key-id]").count(), 1);
    assert.equal((await s.accounts.listKeys(me.id)).length, 1);

    // The page it answered has a fresh form, which creates the second key.
    await page.fill("#name", "twice");
    await page.click("text=Create key");
    assert.notEqual(await page.inputValue("#new-key-value"), value);
    assert.equal((await s.accounts.listKeys(me.id)).length, 2);
    assert.deepEqual(
      problems,
      ["Failed to load resource: the server responded with a status of 409 (Conflict)"],
      "the resent form's 409 is the only console error",
    );
  } finally {
    await browser.close();
  }
});
