/**
 * `npm run screenshots`: the pictures in README's "What reviewers and admins see", regenerated. Starts a scratch
 * Countersign (its own embedded database in a temporary folder; BASE_URL uses a running one instead), makes a few
 * approval requests as the demo agents, and saves 1280-pixel-wide PNGs into docs/screenshots/: the inbox and a
 * request page in the light and the dark theme, and the Slack message and the email for a new request, rendered
 * from lib/slack/message.ts and lib/notify/render.ts into a simple HTML frame.
 *
 *   npm run screenshots                       # scratch server on SCREENSHOTS_PORT (default 3460)
 *   BASE_URL=http://127.0.0.1:3000 npm run screenshots
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "@playwright/test";
import { DEMO_AGENTS, DEMO_PASSWORD } from "../lib/db/seed";
import { buildRpcRequest } from "../lib/mcp/raw-request";
import { escapeHtml, renderNotification, type RequestFacts } from "../lib/notify/render";
import { requestMessage } from "../lib/slack/message";

const OUT = path.resolve(import.meta.dirname, "..", "docs", "screenshots");
const WIDTH = 1280;
const HEIGHT = 860;
const token = (name: string) => DEMO_AGENTS.find((a) => a.name === name)!.token;

async function startScratch(port: number): Promise<{ base: string; stop: () => void }> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "countersign-screenshots-"));
  const env: NodeJS.ProcessEnv = { ...process.env, COUNTERSIGN_DATA_DIR: data, COUNTERSIGN_SANDBOX_DIR: path.join(data, "sandbox"), PORT: String(port), COUNTERSIGN_DEMO_STEADY_CLOCK: "1" };
  delete env.DATABASE_URL;
  const log = fs.openSync(path.join(data, "server.log"), "a");
  const child: ChildProcess = spawn(process.execPath, ["node_modules/tsx/dist/cli.mjs", "scripts/start.ts"], { env, stdio: ["ignore", log, log] });
  const base = `http://127.0.0.1:${port}`;
  const stop = () => {
    child.kill("SIGTERM");
    fs.rmSync(data, { recursive: true, force: true });
  };
  process.on("exit", stop);
  // Waits for the state (the sign-in page answers), for as long as a first build takes; fails if the server dies.
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the scratch server exited; its log: ${path.join(data, "server.log")}`);
    const up = await fetch(`${base}/login`).then((r) => r.ok, () => false);
    if (up) return { base, stop };
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function call(base: string, agent: string, tool: string, args: Record<string, unknown>): Promise<void> {
  const { headers, body } = buildRpcRequest("tools/call", { name: tool, arguments: args }, { token: token(agent), clientName: "countersign-screenshots" });
  const res = await fetch(`${base}/mcp`, { method: "POST", headers, body });
  if (!res.ok) throw new Error(`${tool}: HTTP ${res.status} ${await res.text()}`);
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto("/login");
  await page.locator('html[data-hydrated="true"]').waitFor();
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(DEMO_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/inbox$/);
  await page.locator('html[data-hydrated="true"]').waitFor();
}

async function shoot(page: Page, name: string): Promise<void> {
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file, animations: "disabled", caret: "hide" });
  console.log(`${path.relative(process.cwd(), file)}  ${Math.round(fs.statSync(file).size / 1024)} KB`);
}

/** Both themes of the page that is open: light, then dark (as the system setting asks for it). */
async function bothThemes(page: Page, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await shoot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: "light" });
}

/** Slack's mrkdwn (already escaped for <, > and &) as HTML: *bold* and line breaks. */
function mrkdwn(text: string): string {
  return text.replace(/"/g, "&quot;").replace(/\*([^*\n]+)\*/g, "<strong>$1</strong>").replace(/\n/g, "<br>");
}

function slackHtml(blocks: Record<string, any>[]): string {
  const parts = blocks.map((b) => {
    if (b.type === "section" && b.text) return `<p>${mrkdwn(b.text.text)}</p>`;
    if (b.type === "section" && b.fields) return `<div class="fields">${b.fields.map((f: any) => `<div>${mrkdwn(f.text)}</div>`).join("")}</div>`;
    if (b.type === "actions") {
      return `<div class="actions">${b.elements.map((e: any) => `<span class="button ${e.style ?? ""}">${escapeHtml(e.text.text)}</span>`).join("")}</div>`;
    }
    if (b.type === "context") return `<p class="context">${b.elements.map((e: any) => mrkdwn(e.text)).join(" ")}</p>`;
    return "";
  });
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { font: 15px/1.45 -apple-system, "Segoe UI", Roboto, Arial, sans-serif; background: #f8f8f8; margin: 0; padding: 32px; color: #1d1c1d; }
    .channel { max-width: 760px; background: #fff; border: 1px solid #ddd; border-radius: 8px; }
    .head { padding: 12px 20px; border-bottom: 1px solid #ddd; font-weight: 700; }
    .msg { display: flex; gap: 12px; padding: 16px 20px; }
    .avatar { width: 36px; height: 36px; border-radius: 6px; background: #4f46e5; color: #fff; text-align: center; line-height: 36px; font-weight: 700; }
    .who { font-weight: 700; } .who span { font-weight: 400; color: #616061; font-size: 12px; margin-left: 6px; }
    p { margin: 6px 0; } .fields { display: grid; grid-template-columns: 1fr 1fr; gap: 8px 24px; margin: 8px 0; }
    .actions { display: flex; gap: 8px; margin: 10px 0; } .button { border: 1px solid #bbb; border-radius: 4px; padding: 4px 12px; font-weight: 700; font-size: 13px; }
    .primary { background: #007a5a; color: #fff; border-color: #007a5a; } .danger { color: #e01e5a; border-color: #e01e5a; }
    .context { color: #616061; font-size: 13px; }
  </style></head><body><div class="channel"><div class="head"># approvals</div><div class="msg"><div class="avatar">✓</div><div>
    <div class="who">Countersign <span>APP</span></div>${parts.join("\n")}</div></div></div></body></html>`;
}

function emailHtml(subject: string, to: string, html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Arial, sans-serif; background: #eef0f3; margin: 0; padding: 32px; color: #111; }
    .mail { max-width: 760px; background: #fff; border: 1px solid #d5d9df; border-radius: 8px; }
    .headers { padding: 14px 20px; border-bottom: 1px solid #e3e6ea; } .headers div { margin: 2px 0; } .headers b { display: inline-block; width: 70px; color: #555; font-weight: 600; }
    .subject { font-size: 18px; font-weight: 700; margin-bottom: 6px !important; } .body { padding: 8px 20px 20px; }
  </style></head><body><div class="mail"><div class="headers"><div class="subject">${escapeHtml(subject)}</div>
    <div><b>From</b>Countersign &lt;countersign@example.com&gt;</div><div><b>To</b>${escapeHtml(to)}</div></div>
    <div class="body">${html}</div></div></body></html>`;
}

async function main(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  const scratch = process.env.BASE_URL ? null : await startScratch(Number(process.env.SCREENSHOTS_PORT ?? 3460));
  const base = process.env.BASE_URL ?? scratch!.base;
  let browser: Browser | null = null;
  try {
    await call(base, "support-bot", "issue_refund", { order_id: "O-1145", amount: 212.5, reason: "Damaged in transit, photos in ticket" });
    await call(base, "support-bot", "issue_refund", { order_id: "O-4410", amount: 480, reason: "Duplicate charge" });
    await call(base, "support-bot", "issue_refund", { order_id: "O-2289" });

    browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
    const context = await browser.newContext({ baseURL: base, viewport: { width: WIDTH, height: HEIGHT }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await signIn(page, "lena.lead@countersign.test");
    const items = page.getByTestId("inbox-item");
    await items.nth(2).waitFor();
    await bothThemes(page, "inbox");
    await items.filter({ hasText: "O-2289" }).first().click();
    await page.waitForURL(/\/requests\/[0-9a-f-]{36}$/);
    await page.locator('html[data-hydrated="true"]').waitFor();
    await bothThemes(page, "request");
    const requestUrl = page.url();

    // The Slack message and the email for a new two-approver transfer, from the builders the server uses.
    const now = new Date();
    const facts: RequestFacts = {
      id: "7d1f3c2a-5b8e-4f0a-9c61-2e4b8d9a0f13",
      summary: "USD 30000.00 transfer to acct-991",
      tool: "wire_transfer",
      arguments: { to: "acct-991", amount: 30000, memo: "Q3 supplier invoice INV-88" },
      approverGroup: "treasury",
      approvalsRequired: 2,
      requirePasskey: false,
      approvals: 0,
      status: "pending",
      deadline: new Date(now.getTime() + 24 * 3600_000),
      agentName: "ops-bot",
      requesterName: "Otto Ops",
      reviews: [],
      link: requestUrl.replace(/\/requests\/.*/, "/requests/7d1f3c2a-5b8e-4f0a-9c61-2e4b8d9a0f13"),
    };
    const frame = await context.newPage();
    await frame.setViewportSize({ width: WIDTH, height: 560 });
    await frame.setContent(slackHtml(requestMessage(facts, false, now).blocks));
    await shoot(frame, "slack-message");
    const mail = renderNotification("created", facts, { name: "Tara Treasury" }, now);
    await frame.setViewportSize({ width: WIDTH, height: 760 });
    await frame.setContent(emailHtml(mail.subject, "Tara Treasury <tara.treasury@countersign.test>", mail.html));
    await shoot(frame, "email");
  } finally {
    await browser?.close();
    scratch?.stop();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
