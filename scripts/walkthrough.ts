/**
 * `npm run docs:walkthrough`: writes docs/walkthrough.md from real requests and responses. It starts its own
 * Countersign (scripts/start.ts, normal mode, scratch embedded database, port WALKTHROUGH_PORT or 3237), plays
 * an agent over raw JSON-RPC/HTTP and a reviewer through the inbox's own lib functions against that server's
 * database, records every exchange verbatim, and stops the server. Rerun it after any change to the MCP surface
 * so the chapter never goes stale.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const port = Number(process.env.WALKTHROUGH_PORT ?? 3237);
const base = `http://127.0.0.1:${port}`;
const TOKEN = "cs_demo-support-bot-token-not-for-production-0001";
const OPS_TOKEN = "cs_demo-ops-bot-token-not-for-production-000002";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const TASKS_AND_FORMS = { ...TASKS, elicitation: { form: {} } };

type Json = Record<string, any>;
const out: string[] = [];
const md = (s = "") => out.push(s);

let id = 1;

/** One exchange, recorded: request line, the headers that matter, the JSON body, then the response. */
async function exchange(
  title: string,
  method: string,
  params: Json,
  opts: { token?: string | null; caps?: object; headers?: Record<string, string>; note?: string; meta?: boolean } = {},
): Promise<{ status: number; body: any }> {
  const name = typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : undefined;
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": method,
    ...(name ? { "Mcp-Name": name } : {}),
    ...(opts.token === null ? {} : { Authorization: `Bearer ${opts.token ?? TOKEN}` }),
    ...(opts.headers ?? {}),
  };
  const body = {
    jsonrpc: "2.0",
    id: id++,
    method,
    params: {
      ...params,
      ...(opts.meta === false
        ? {}
        : {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "walkthrough-agent", version: "1" },
              "io.modelcontextprotocol/clientCapabilities": opts.caps ?? TASKS,
            },
          }),
    },
  };
  const res = await fetch(`${base}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: any = null;
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    parsed = text.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5))).reverse()[0];
  } else if (text) {
    parsed = JSON.parse(text);
  }
  md(`#### ${title}`);
  md();
  if (opts.note) {
    md(opts.note);
    md();
  }
  md("```http");
  md(`POST /mcp HTTP/1.1`);
  for (const [k, v] of Object.entries(headers)) md(`${k}: ${v}`);
  md();
  md(JSON.stringify(body, null, 2));
  md("```");
  md();
  md("```http");
  md(`HTTP/1.1 ${res.status} ${res.statusText}`);
  const keep = ["content-type", "www-authenticate"];
  for (const k of keep) if (res.headers.get(k)) md(`${k}: ${res.headers.get(k)}`);
  md();
  md(parsed ? JSON.stringify(parsed, null, 2) : text);
  md("```");
  md();
  return { status: res.status, body: parsed };
}

async function startServer(): Promise<{ stop: () => Promise<void>; dbUrl: string }> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), "countersign-walkthrough-"));
  const env: NodeJS.ProcessEnv = { ...process.env, COUNTERSIGN_DATA_DIR: data, COUNTERSIGN_SANDBOX_DIR: path.join(data, "sandbox"), PORT: String(port), COUNTERSIGN_SWEEP_MS: "1000" };
  delete env.DATABASE_URL;
  delete env.COUNTERSIGN_CONFORMANCE;
  const child = spawn(process.execPath, [path.join(root, "node_modules/tsx/dist/cli.mjs"), "scripts/start.ts"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`${base}/login`).then((r) => r.ok, () => false);
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`the server did not start:\n${log.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const owner = JSON.parse(fs.readFileSync(path.join(data, "owner.json"), "utf8")) as { port: number };
  return {
    dbUrl: `postgres://postgres:postgres@127.0.0.1:${owner.port}/postgres?sslmode=disable`,
    stop: async () => {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
      fs.rmSync(data, { recursive: true, force: true });
    },
  };
}

async function main() {
  const server = await startServer();
  process.env.DATABASE_URL = server.dbUrl;
  const { db, closeDb } = await import("../lib/db/client");
  const { decide } = await import("../lib/tasks/decide");
  const { askRequester } = await import("../lib/tasks/ask");
  const lena = await db().user.findUniqueOrThrow({ where: { email: "lena.lead@countersign.test" } });
  const handleOf = async (taskId: string) => (await db().task.findUniqueOrThrow({ where: { id: taskId } })).handle!;
  const reviewer = async (taskId: string, decision: "approve" | "deny", comment?: string) =>
    decide({ requestId: await handleOf(taskId), reviewerId: lena.id, decision, comment }, new Date());

  try {
    md("# Walkthrough: Countersign's MCP surface, request by request");
    md();
    md("> Generated by `npm run docs:walkthrough` (scripts/walkthrough.ts) from a Countersign it started on a scratch database");
    md(`> at ${new Date().toISOString().slice(0, 16)} UTC. Every request and response below is verbatim; ids and times are real.`);
    md("> The agent is the demo `support-bot` (its token is a published demo token). The reviewer, Lena Lead, acts");
    md("> out of band in the inbox; here the script calls the same `decide` function the inbox's server action calls.");
    md();

    md("## 1. Discovery");
    md();
    await exchange("server/discover: the server declares the tasks and tool-approval extensions", "server/discover", {});

    md("## 2. A requestable denial returns a task, and approval executes it once");
    md();
    const created = await exchange(
      "tools/call: a refund above EUR 150.00 from a tasks client",
      "tools/call",
      { name: "issue_refund", arguments: { order_id: "O-2289" } },
      { note: "The policy denies this call for now but a support lead can approve it. The tool does not run; the answer is a flat `CreateTaskResult` carrying the SEP-2643 envelope and a message for the model." },
    );
    const taskId = created.body.result.taskId as string;
    await exchange("tasks/get while the request waits: the envelope is repeated", "tasks/get", { taskId });
    md("*Lena approves the request in the inbox. The approval is an input to a fresh evaluation; it allows, the task is claimed and the refund runs once.*");
    md();
    await reviewer(taskId, "approve");
    await exchange("tasks/get after approval: completed, approved-executed, the result inlined", "tasks/get", { taskId });

    md("## 3. A denial is a completed task whose body says the tool did not run");
    md();
    const toDeny = await exchange("tools/call: another refund above the limit", "tools/call", { name: "issue_refund", arguments: { order_id: "O-4410" } });
    const deniedId = toDeny.body.result.taskId as string;
    md("*Lena denies it with a comment. Neither her identity nor her comment reaches the agent.*");
    md();
    await reviewer(deniedId, "deny", "Refund of a shipped order: ask the customer to return it first.");
    await exchange("tasks/get after the denial: completed, isError, denied-not-executed, remediation unavailable", "tasks/get", { taskId: deniedId });

    md("## 4. A reviewer asks a question in the task; the agent answers with tasks/update");
    md();
    const asked = await exchange("tools/call", "tools/call", { name: "issue_refund", arguments: { order_id: "O-1145" } });
    const askedId = asked.body.result.taskId as string;
    await askRequester({ requestId: await handleOf(askedId), reviewerId: lena.id, question: "Which support ticket is this refund for?" }, new Date());
    md("*Lena asks the requester a question from the request page.*");
    md();
    const waiting = await exchange("tasks/get: input_required, the question as an elicitation request", "tasks/get", { taskId: askedId });
    const key = Object.keys(waiting.body.result.inputRequests)[0];
    await exchange("tasks/update: the answer", "tasks/update", { taskId: askedId, inputResponses: { [key]: { action: "accept", content: { answer: "SUP-2231" } } } });
    await exchange("tasks/get: working again, waiting for the decision", "tasks/get", { taskId: askedId });

    md("## 5. Cancellation");
    md();
    await exchange("tasks/cancel: an empty acknowledgement", "tasks/cancel", { taskId: askedId });
    await exchange("tasks/get: cancelled; the tool did not run", "tasks/get", { taskId: askedId });

    md("## 6. Submission input before the task (MRTR)");
    md();
    await db().policyRule.updateMany({ where: { ruleKey: "deploy-production", active: true }, data: { requireJustification: true } });
    md("*The production-deploy rule is set to require a justification before anything is submitted.*");
    md();
    const deployArgs = { service: "checkout-api", environment: "production", version: "1.4.2" };
    const ask1 = await exchange(
      "tools/call: the server asks for a justification first",
      "tools/call",
      { name: "deploy_service", arguments: deployArgs },
      { caps: TASKS_AND_FORMS, note: "The client declared form elicitation, so the server answers `input_required` with a sealed `requestState` bound to this agent, this tool and these arguments. Nothing is submitted yet." },
    );
    const state = ask1.body.result.requestState as string;
    await exchange(
      "tools/call again: the answer and the echoed requestState; now the request is submitted",
      "tools/call",
      { name: "deploy_service", arguments: deployArgs, requestState: state, inputResponses: { approval_request: { action: "accept", content: { justification: "Hotfix for the checkout outage INC-77", ticket: "INC-77" } } } },
      { caps: TASKS_AND_FORMS },
    );
    await exchange(
      "the same state replayed: refused, the state is single-use",
      "tools/call",
      { name: "deploy_service", arguments: deployArgs, requestState: state, inputResponses: { approval_request: { action: "accept", content: { justification: "Hotfix for the checkout outage INC-77" } } } },
      { caps: TASKS_AND_FORMS },
    );

    md("## 7. The degraded path: a client without the tasks extension");
    md();
    await exchange("tools/call without the tasks extension: isError with next steps", "tools/call", { name: "wire_transfer", arguments: { to: "acct-991", amount: 50_000 } }, { caps: {}, token: OPS_TOKEN });
    const opened = await exchange(
      "request_access: opens the same approval request a tasks client would get",
      "tools/call",
      { name: "request_access", arguments: { tool: "wire_transfer", arguments: { to: "acct-991", amount: 50_000 } } },
      { caps: {}, token: OPS_TOKEN },
    );
    const requestId = opened.body.result.structuredContent.request_id as string;
    await exchange("get_request_status while pending", "tools/call", { name: "get_request_status", arguments: { request_id: requestId } }, { caps: {}, token: OPS_TOKEN });
    await exchange(
      "get_request_status from another agent: unknown, like any id it did not open",
      "tools/call",
      { name: "get_request_status", arguments: { request_id: requestId } },
      { caps: {} },
    );

    md("## 8. Refusals");
    md();
    await exchange("no bearer token: 401 with WWW-Authenticate", "tools/list", {}, { token: null });
    await exchange("a foreign Origin: 403", "tools/list", {}, { headers: { Origin: "https://evil.example" } });
    await exchange("tasks/get without the tasks extension in the request's capabilities: -32021", "tasks/get", { taskId }, { caps: {} });
    await exchange("tasks/get for a task of another agent: the same -32602 as an unknown id", "tasks/get", { taskId }, { token: OPS_TOKEN });
  } finally {
    await closeDb();
    await server.stop();
  }
  const file = path.join(root, "docs", "walkthrough.md");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${out.join("\n").trimEnd()}\n`);
  console.log(`[walkthrough] wrote ${path.relative(root, file)} (${out.length} lines)`);
}

main().catch((e) => {
  console.error(`[walkthrough] failed: ${e instanceof Error ? e.stack : String(e)}`);
  process.exit(1);
});
