/**
 * The web surface under attack: a request page framed by another origin (clickjacking) refuses to render and a
 * click there approves nothing; every route sends the security headers, and pages run under a nonce-based
 * Content-Security-Policy without a violation; session cookies are Secure over HTTPS; /mcp still answers.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { ADMIN, OPS_BOT, SASHA, gatedCall, getTask, mcpRaw, openFromInbox, personIn, ready, signIn, unique } from "./support";

/** A page on another origin (another port of the same host) that frames `target` under a decoy button. */
async function framingSite(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const html = `<!doctype html><html><head><title>Win a prize</title></head><body style="margin:0">
<button id="bait" style="position:absolute;left:0;top:0;z-index:2;opacity:0.01">Claim your prize</button>
<iframe id="victim" src="${target}" width="1200" height="900" style="border:0"></iframe></body></html>`;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

test.describe("clickjacking", () => {
  test("a request page framed by another origin does not render, and clicking in the frame approves nothing", async ({ browser, request }, testInfo) => {
    const service = `frame-${unique()}`;
    const taskId = await gatedCall(request, OPS_BOT, "deploy_service", { service, environment: "production", version: "3.1.4" });
    const sasha = await personIn(browser, testInfo, SASHA.email);
    const requestId = await openFromInbox(sasha.page, service, taskId);
    await expect(sasha.page.getByRole("button", { name: "Approve" })).toBeVisible(); // she could approve it here
    const target = new URL(`/requests/${requestId}`, testInfo.project.use.baseURL).toString();

    const site = await framingSite(target);
    try {
      // The same signed-in browser visits the attacker's page, which frames the request page.
      const attack = await sasha.context.newPage();
      const framed = attack.waitForResponse((r) => r.url() === target);
      await attack.goto(site.url);
      expect((await framed).status()).toBe(200);
      // The browser refuses to show the response in the frame: the frame ends on the browser's error page.
      const child = () => attack.frames().find((f) => f.parentFrame() === attack.mainFrame());
      await expect.poll(() => child()?.url()).toMatch(/^chrome-error:/);
      const frame = attack.frameLocator("#victim");
      await expect(frame.getByTestId("request-summary")).toHaveCount(0);
      await expect(frame.getByRole("button", { name: "Approve" })).toHaveCount(0);

      // Click everywhere the frame is: nothing reaches the request.
      const box = (await attack.locator("#victim").boundingBox())!;
      for (let y = 50; y < box.height; y += 100) for (let x = 100; x < box.width; x += 200) await attack.mouse.click(box.x + x, box.y + y);
      await attack.close();
    } finally {
      await site.close();
    }
    await sasha.page.reload();
    await expect(sasha.page.getByRole("heading", { name: /^Approvals 0 of \d+$/ })).toBeVisible();
    await expect(sasha.page.getByText("No one has reviewed this request yet.")).toBeVisible();
    expect((await getTask(request, OPS_BOT, taskId)).status).toBe("working");
    await sasha.context.close();
  });
});

const SECURITY_HEADERS = {
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
};

function expectSecurityHeaders(headers: Record<string, string>, what: string): string {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(headers[name], `${what}: ${name}`).toBe(value);
  const csp = headers["content-security-policy"] ?? "";
  expect(csp, `${what}: Content-Security-Policy`).toContain("frame-ancestors 'none'");
  expect(csp, `${what}: Content-Security-Policy`).toContain("object-src 'none'");
  expect(csp, `${what}: Content-Security-Policy`).toContain("base-uri 'none'");
  return csp;
}

/** CSP violations the page reports (collected from the first script that runs, before the page's own). */
async function watchViolations(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __cspViolations: string[] }).__cspViolations = seen;
    document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`));
  });
  return () => page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations ?? []);
}

test.describe("security headers", () => {
  test("pages, JSON routes, the 404 page, static assets and /mcp all send them; /mcp still answers", async ({ browser, request }, testInfo) => {
    const login = await request.get("/login");
    expect(login.status()).toBe(200);
    const pageCsp = expectSecurityHeaders(login.headers(), "/login");
    // Pages: scripts only with this response's nonce, no inline script or eval without it.
    const nonce = /'nonce-([A-Za-z0-9+/=_-]+)'/.exec(pageCsp)?.[1];
    expect(nonce, pageCsp).toBeTruthy();
    expect(pageCsp).toContain("'strict-dynamic'");
    expect(pageCsp).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    expect(pageCsp).toContain("form-action 'self'");
    const html = await login.text();
    expect(html).toContain(`nonce="${nonce}"`);
    // A fresh nonce per response.
    const again = expectSecurityHeaders((await request.get("/login")).headers(), "/login again");
    expect(again).not.toContain(nonce);

    const scriptSrc = /<script[^>]+src="(\/_next\/static\/[^"]+\.js)"/.exec(html)?.[1];
    expect(scriptSrc, "a static script of the page").toBeTruthy();
    const asset = await request.get(scriptSrc!);
    expect(asset.status()).toBe(200);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(asset.headers()[name], `static asset: ${name}`).toBe(value);

    const missing = await request.get(`/no-such-page-${unique()}`);
    expect(missing.status()).toBe(404);
    expectSecurityHeaders(missing.headers(), "404");

    const sasha = await personIn(browser, testInfo, SASHA.email);
    const api = await sasha.page.request.get("/api/inbox");
    expect(api.status()).toBe(200);
    expectSecurityHeaders(api.headers(), "/api/inbox");
    const csrf = await request.get("/api/auth/csrf");
    expect(csrf.status()).toBe(200);
    expectSecurityHeaders(csrf.headers(), "/api/auth/csrf");
    await sasha.context.close();

    const mcp = await mcpRaw(request, OPS_BOT, "tools/list");
    expect(mcp.status, mcp.text).toBe(200);
    expect(mcp.message?.result?.tools?.length).toBeGreaterThan(0);
    const mcpHeaders = (await request.post("/mcp", { headers: { authorization: `Bearer ${OPS_BOT}`, "content-type": "application/json" }, data: "{}", failOnStatusCode: false })).headers();
    expectSecurityHeaders(mcpHeaders, "/mcp");
  });

  test("signed-in pages run under the policy without a single violation", async ({ browser, request }, testInfo) => {
    const service = `csp-${unique()}`;
    const taskId = await gatedCall(request, OPS_BOT, "deploy_service", { service, environment: "production", version: "1.0.0" });
    const context = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
    const page = await context.newPage();
    const violations = await watchViolations(page);
    await signIn(page, SASHA.email);
    expect(await violations()).toEqual([]);
    await openFromInbox(page, service, taskId);
    // Client code runs (the page is interactive): the decision form answers in place.
    await page.getByRole("button", { name: "Deny" }).click();
    await expect(page.getByText("Say why you deny this request.")).toBeVisible();
    expect(await violations()).toEqual([]);
    await page.goto("/history");
    await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
    expect(await violations()).toEqual([]);
    await context.close();

    // The admin console too.
    const adminContext = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
    const admin = await adminContext.newPage();
    const adminViolations = await watchViolations(admin);
    await signIn(admin, ADMIN.email);
    for (const path of ["/admin/policy", "/admin/people", "/admin/audit", "/admin/webhooks"]) {
      await admin.goto(path);
      await ready(admin);
      expect(await adminViolations(), path).toEqual([]);
    }
    await adminContext.close();
  });

  test("over HTTPS the session cookies are Secure (and HSTS is sent); over plain HTTP they are not", async ({ request }) => {
    const https = await request.get("/api/auth/csrf", { headers: { "x-forwarded-proto": "https" } });
    const secureCookie = https.headersArray().filter((h) => h.name.toLowerCase() === "set-cookie").map((h) => h.value);
    expect(secureCookie.join("\n")).toMatch(/__Host-authjs\.csrf-token=[^;]+;.*Secure/i);
    expect(https.headers()["strict-transport-security"]).toMatch(/max-age=\d+/);

    const plain = await request.get("/api/auth/csrf");
    const plainCookie = plain.headersArray().filter((h) => h.name.toLowerCase() === "set-cookie").map((h) => h.value).join("\n");
    expect(plainCookie).toMatch(/authjs\.csrf-token=/);
    expect(plainCookie).not.toMatch(/Secure/i);
    expect(plain.headers()["strict-transport-security"]).toBeUndefined();

    const login = await request.get("/login", { headers: { "x-forwarded-proto": "https" } });
    expect(login.headers()["content-security-policy"]).toContain("upgrade-insecure-requests");
    expect((await request.get("/login")).headers()["content-security-policy"]).not.toContain("upgrade-insecure-requests");
  });
});
