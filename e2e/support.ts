/**
 * Helpers shared by the end-to-end specs: an MCP agent speaking JSON-RPC over HTTP (2026-07-28 headers and the
 * per-request `_meta` envelope declaring the tasks extension, as scripts/agent.ts sends them), signing in through
 * the real form, agents created through the admin console, keyboard navigation, and the accessibility check.
 */
import fs from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { expect, type APIRequestContext, type Browser, type BrowserContext, type Locator, type Page, type TestInfo } from "@playwright/test";
import { DEMO_AGENTS, DEMO_PASSWORD, DEMO_USERS } from "../lib/db/seed";
import { buildRpcRequest, parseRpcBody } from "../lib/mcp/raw-request";

export const DISPOSITION_KEY = "io.modelcontextprotocol/tool-approval-disposition";

export const SUPPORT_BOT = DEMO_AGENTS.find((a) => a.name === "support-bot")!.token;
export const OPS_BOT = DEMO_AGENTS.find((a) => a.name === "ops-bot")!.token;

export const user = (email: string) => DEMO_USERS.find((u) => u.email === email)!;
export const ADMIN = user("admin@countersign.test");
export const LENA = user("lena.lead@countersign.test");
export const TARA = user("tara.treasury@countersign.test");
export const THEO = user("theo.treasury@countersign.test");
export const SASHA = user("sasha.sre@countersign.test");
export const OTTO = user("otto.ops@countersign.test");

export type Json = Record<string, any>;

/** A short suffix that keeps accounts, services and agent names of one run apart from any other run. */
export function unique(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

let rpcId = 1;

/** One JSON-RPC request to /mcp as the agent holding `token`: the HTTP status and the JSON-RPC message. */
export async function mcpRaw(request: APIRequestContext, token: string, method: string, params: Json = {}): Promise<{ status: number; message: Json | null; text: string; id: string }> {
  const id = `e2e-${rpcId++}`;
  const { headers, body } = buildRpcRequest(method, params, { token, id, clientName: "countersign-e2e" });
  const res = await request.post("/mcp", { headers, data: body });
  const text = await res.text();
  let message: Json | null = null;
  try {
    message = parseRpcBody(text, res.headers()["content-type"] ?? "");
  } catch {
    message = null;
  }
  return { status: res.status(), message, text, id };
}

/** A successful JSON-RPC call: its result. */
export async function mcp(request: APIRequestContext, token: string, method: string, params: Json = {}): Promise<Json> {
  const { status, message, text, id } = await mcpRaw(request, token, method, params);
  expect(status, text).toBe(200);
  expect(message?.id).toBe(id);
  expect(message?.error, JSON.stringify(message?.error)).toBeUndefined();
  return message!.result as Json;
}

export const callTool = (request: APIRequestContext, token: string, tool: string, args: Json) => mcp(request, token, "tools/call", { name: tool, arguments: args });

/** A call that policy holds for approval: the task id of the working task it returns. */
export async function gatedCall(request: APIRequestContext, token: string, tool: string, args: Json): Promise<string> {
  const created = await callTool(request, token, tool, args);
  expect(created.resultType, JSON.stringify(created)).toBe("task");
  expect(created.status).toBe("working");
  return String(created.taskId);
}

export const getTask = (request: APIRequestContext, token: string, taskId: string) => mcp(request, token, "tasks/get", { taskId });

/** Polls tasks/get until the task reaches one of `statuses`, then returns it. */
export async function taskReaching(request: APIRequestContext, token: string, taskId: string, statuses: string[] = ["completed", "failed", "cancelled"]): Promise<Json> {
  let task: Json = {};
  await expect
    .poll(async () => (task = await getTask(request, token, taskId)).status, { timeout: 30_000, intervals: [250, 500, 1000] })
    .toMatch(new RegExp(`^(${statuses.join("|")})$`));
  return task;
}

/**
 * Waits until React has taken over the page that is loaded now (a full page load renders on the server first;
 * typing or clicking before hydration can be lost or submit the form natively). Call after every `goto`,
 * `reload` or full navigation that is followed by typing or clicking.
 */
export async function ready(page: Page): Promise<void> {
  await expect(page.locator("html")).toHaveAttribute("data-hydrated", "true");
}

export async function signIn(page: Page, email: string): Promise<void> {
  await page.goto("/login");
  await ready(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/inbox$/);
  await expect(page.getByTestId("signed-in-user")).toContainText(user(email).name);
  await ready(page);
}

/** A fresh browser context (its own cookies: one person) signed in as `email`. */
export async function personIn(browser: Browser, testInfo: TestInfo, email: string, opts: { width?: number } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    baseURL: testInfo.project.use.baseURL,
    ...(opts.width ? { viewport: { width: opts.width, height: 844 }, isMobile: true, hasTouch: true } : {}),
  });
  const page = await context.newPage();
  await signIn(page, email);
  return { context, page };
}

/** Opens the request of task `taskId` from the reviewer's inbox (found by searching for `search`). */
export async function openFromInbox(page: Page, search: string, taskId: string): Promise<string> {
  await page.goto(`/inbox?q=${encodeURIComponent(search)}`);
  await ready(page);
  const item = page.getByTestId("inbox-item").filter({ hasText: search }).first();
  await expect(item).toBeVisible();
  await item.click();
  await expect(page).toHaveURL(/\/requests\/[0-9a-f-]{36}$/);
  await expect(page.getByText(taskId)).toBeAttached(); // among the folded ids
  await ready(page);
  return page.url().split("/").pop()!;
}

/** Creates an agent through the admin console (People and agents) and returns its token, shown there once. */
export async function createAgentViaAdmin(browser: Browser, testInfo: TestInfo, name: string, ownerEmail: string): Promise<string> {
  const { context, page } = await personIn(browser, testInfo, ADMIN.email);
  await page.goto("/admin/people");
  await ready(page);
  await page.getByLabel("Agent name").fill(name);
  await page.getByLabel("Acts for").selectOption({ label: `${user(ownerEmail).name} (${ownerEmail})` });
  await page.getByRole("button", { name: "Create agent" }).click();
  const token = (await page.getByTestId("new-token").textContent())?.trim() ?? "";
  expect(token).toMatch(/^cs_[A-Za-z0-9_-]{32,}$/);
  await context.close();
  return token;
}

/** Presses Tab until `target` has focus (keyboard-only navigation); fails if it never does. */
export async function tabTo(page: Page, target: Locator, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
  }
  throw new Error(`Tab never reached ${target}`);
}

/**
 * Runs axe on the page in both colour schemes (light, and dark as the system setting asks for it: app/theme-dark.css)
 * and fails on any serious or critical violation in either. All violations (any impact) are attached to the test and
 * written beside its screenshots. The page is left in the scheme it was in.
 */
export async function expectAccessible(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const wasDark = await page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches);
  const schemes = wasDark ? (["light", "dark"] as const) : (["dark", "light"] as const);
  const blocking: { scheme: string; id: string; help: string; nodes: string[] }[] = [];
  for (const scheme of schemes) {
    await page.emulateMedia({ colorScheme: scheme });
    await expect.poll(() => page.evaluate(() => matchMedia("(prefers-color-scheme: dark)").matches)).toBe(scheme === "dark");
    const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze();
    const summary = results.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
    const file = testInfo.outputPath(scheme === "light" ? `axe-${name}.json` : `axe-${name}-dark.json`);
    fs.writeFileSync(file, JSON.stringify({ url: page.url(), scheme, passes: results.passes.length, violations: summary }, null, 2));
    blocking.push(...summary.filter((v) => v.impact === "serious" || v.impact === "critical").map(({ id, help, nodes }) => ({ scheme, id, help, nodes })));
  }
  expect(blocking, `${name}: serious or critical accessibility violations (light and dark)`).toEqual([]);
}

export async function screenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}
