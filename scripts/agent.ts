/**
 * A small command-line MCP agent for Countersign: calls a tool and, when the call comes back as an approval task,
 * polls the task until it settles.
 *
 *   npm run agent -- [--url URL] [--token TOKEN] [--poll-ms N] [--timeout-s N] [--no-wait]
 *                    [--justification TEXT] [--ticket REF] COMMAND ...
 *     call TOOL ['{"json":"arguments"}']   call a tool; wait for its task if one is returned
 *     get TASK_ID                          show a task; wait for it unless it is already terminal
 *     answer TASK_ID KEY TEXT              answer a reviewer's question (tasks/update)
 *     cancel TASK_ID                       cancel a task
 *     tools                                list the tools
 *
 * Questions: a rule may need a justification before anything is submitted (the server answers the call with
 * input_required); --justification/--ticket answer it, or the agent asks on the terminal. A reviewer may ask a
 * question while the task waits (input_required on tasks/get); the agent asks it on the terminal, or, without a
 * terminal, stops and prints the `answer` command to run.
 *
 * The token comes from --token or COUNTERSIGN_TOKEN; the URL defaults to http://localhost:3000/mcp.
 * Exit codes: 0 completed with approved-executed or a plain successful result; 2 denied, tool error, failed,
 * cancelled or outcome unknown; 3 gave up waiting (the task is still open: resume with `get`); 1 usage or
 * protocol error.
 *
 * Built on the SDK Client pinned to 2026-07-28 (connect, tasks/get, tasks/cancel). The SDK Client refuses a
 * `resultType: "task"` answer to tools/call, so that one request is sent as raw JSON-RPC with the same
 * per-request `_meta` envelope; task shapes are checked with @modelcontextprotocol/ext-tasks' V2 schemas.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  SdkHttpError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { TASKS_EXTENSION_ID_V2, isCreateTaskResultV2, isDetailedTaskV2 } from "@modelcontextprotocol/ext-tasks/core/v2";
import { z } from "zod";

const REVISION = "2026-07-28";
const CLIENT_INFO = { name: "countersign-agent", version: "0.1.0" };
// Tasks, and form elicitation so the server may ask for submission input before it submits (MRTR).
const CAPABILITIES = { extensions: { [TASKS_EXTENSION_ID_V2]: {} }, elicitation: { form: {} } };
const DISPOSITION_KEY = "io.modelcontextprotocol/tool-approval-disposition";
const AUTHORIZATION_KEY = "io.modelcontextprotocol/authorization";
const IMMEDIATE_KEY = "io.modelcontextprotocol/model-immediate-response";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

const EXIT = { ok: 0, usage: 1, protocol: 1, negative: 2, gaveUp: 3 } as const;

type Json = Record<string, unknown>;
type Options = { url: string; token: string; pollMs?: number; timeoutS: number; wait: boolean; justification?: string; ticket?: string };

class UsageError extends Error {}
class AuthFailed extends Error {}
class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// command line

function usage(): string {
  return [
    "usage: npm run agent -- [--url URL] [--token TOKEN] [--poll-ms N] [--timeout-s N] [--no-wait] [--justification TEXT] [--ticket REF] COMMAND ...",
    "  call TOOL ['{\"json\":\"arguments\"}']   call a tool; wait for its task if one is returned",
    "  get TASK_ID                          show a task; wait until it settles",
    "  answer TASK_ID KEY TEXT              answer a reviewer's question (tasks/update)",
    "  cancel TASK_ID                       cancel a task",
    "  tools                                list the tools",
    "token: --token or COUNTERSIGN_TOKEN; url default http://localhost:3000/mcp; --timeout-s default 600",
    "exit: 0 executed / plain success, 2 denied / error / failed / cancelled / unknown, 3 gave up waiting, 1 usage or protocol error",
  ].join("\n");
}

function parseArgs(argv: string[]): { opts: Options; command: string[] } {
  const opts: Options = {
    url: process.env.COUNTERSIGN_URL ?? "http://localhost:3000/mcp",
    token: process.env.COUNTERSIGN_TOKEN ?? "",
    timeoutS: 600,
    wait: true,
  };
  const command: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    const positiveInt = (name: string, v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name} must be a positive integer`);
      return n;
    };
    if (a === "--url") opts.url = value();
    else if (a === "--token") opts.token = value();
    else if (a === "--poll-ms") opts.pollMs = positiveInt(a, value());
    else if (a === "--timeout-s") opts.timeoutS = positiveInt(a, value());
    else if (a === "--no-wait") opts.wait = false;
    else if (a === "--justification") opts.justification = value();
    else if (a === "--ticket") opts.ticket = value();
    else if (a === "-h" || a === "--help") throw new UsageError("");
    else if (a.startsWith("--")) throw new UsageError(`unknown option ${a}`);
    else command.push(a);
  }
  if (command.length === 0) throw new UsageError("no command given");
  if (!opts.token) throw new UsageError("no token: pass --token or set COUNTERSIGN_TOKEN");
  try {
    new URL(opts.url);
  } catch {
    throw new UsageError(`not a URL: ${opts.url}`);
  }
  return { opts, command };
}

// ---------------------------------------------------------------------------------------------------------------
// the connection

class Session {
  private nextId = 1;
  private constructor(
    private readonly opts: Options,
    readonly client: Client,
  ) {}

  static async open(opts: Options): Promise<Session> {
    const client = new Client(CLIENT_INFO, {
      capabilities: CAPABILITIES,
      versionNegotiation: { mode: { pin: REVISION } },
    });
    const transport = new StreamableHTTPClientTransport(new URL(opts.url), {
      authProvider: { token: async () => opts.token },
    });
    try {
      await client.connect(transport);
    } catch (err) {
      const e = classify(err);
      if (/fetch failed|ECONNREFUSED/.test(e.message)) throw new Error(`cannot reach ${opts.url} (${e.message})`);
      throw e;
    }
    return new Session(opts, client);
  }

  serverHasTasks(): boolean {
    const ext = (this.client.getServerCapabilities() as { extensions?: Json } | undefined)?.extensions;
    return !!ext && typeof ext[TASKS_EXTENSION_ID_V2] === "object";
  }

  /** tools/call as raw JSON-RPC, with the headers and `_meta` envelope the SDK Client would send. */
  async callToolRaw(name: string, args: Json, extra: Json = {}): Promise<Json> {
    const id = this.nextId++;
    const body = {
      jsonrpc: "2.0",
      id: `agent-${id}`,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        ...extra,
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: this.client.getNegotiatedProtocolVersion() ?? REVISION,
          [CLIENT_INFO_META_KEY]: CLIENT_INFO,
          [CLIENT_CAPABILITIES_META_KEY]: CAPABILITIES,
        },
      },
    };
    let res: Response;
    try {
      res = await fetch(this.opts.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": REVISION,
          "Mcp-Method": "tools/call",
          "Mcp-Name": name,
          Authorization: `Bearer ${this.opts.token}`,
        },
        body: JSON.stringify(body),
      });
    } catch (err) {
      throw new Error(`cannot reach ${this.opts.url}: ${(err as Error).message}`);
    }
    if (res.status === 401) throw new AuthFailed("the server refused the token (HTTP 401)");
    const messages = await readMessages(res);
    const reply = messages.find((m) => m.id === body.id);
    if (!reply) throw new Error(`no JSON-RPC answer (HTTP ${res.status})`);
    const error = reply.error as { code?: number; message?: string } | undefined;
    if (error) throw new RpcError(Number(error.code), String(error.message ?? "error"));
    return reply.result as Json;
  }

  async getTask(taskId: string): Promise<Json> {
    return this.request("tasks/get", taskId);
  }

  async cancelTask(taskId: string): Promise<Json> {
    return this.request("tasks/cancel", taskId);
  }

  async updateTask(taskId: string, inputResponses: Json): Promise<Json> {
    return this.request("tasks/update", taskId, { inputResponses });
  }

  private async request(method: string, taskId: string, extra: Json = {}): Promise<Json> {
    try {
      return (await this.client.request({ method, params: { taskId, ...extra } }, z.looseObject({}))) as Json;
    } catch (err) {
      throw classify(err);
    }
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => {});
  }
}

/** The body of a JSON or SSE response as JSON-RPC messages. */
async function readMessages(res: Response): Promise<Json[]> {
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  const parse = (s: string): Json[] => {
    try {
      const v = JSON.parse(s) as unknown;
      return (Array.isArray(v) ? v : [v]).filter((m): m is Json => typeof m === "object" && m !== null);
    } catch {
      return [];
    }
  };
  if (!type.includes("text/event-stream")) return parse(text);
  return text
    .split(/\r?\n\r?\n/)
    .map((event) =>
      event
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n"),
    )
    .filter(Boolean)
    .flatMap(parse);
}

function classify(err: unknown): Error {
  if (err instanceof UnauthorizedError) return new AuthFailed("the server refused the token (HTTP 401)");
  if (err instanceof SdkHttpError && /\b401\b/.test(err.message)) return new AuthFailed("the server refused the token (HTTP 401)");
  if (err instanceof ProtocolError) return new RpcError(err.code, err.message);
  return err instanceof Error ? err : new Error(String(err));
}

/** Network trouble or a 5xx: worth another poll. A JSON-RPC error or a 401 is not. */
function transient(err: Error): boolean {
  return !(err instanceof RpcError) && !(err instanceof AuthFailed);
}

// ---------------------------------------------------------------------------------------------------------------
// printing

const clock = () => new Date().toTimeString().slice(0, 8);
const line = (s = "") => process.stdout.write(`${s}\n`);
const str = (v: unknown) => (typeof v === "string" ? v : undefined);

function resultText(result: Json | undefined): string {
  const content = Array.isArray(result?.content) ? (result.content as Json[]) : [];
  const texts = content.map((c) => (c.type === "text" ? String(c.text) : `[${String(c.type)} content]`));
  return texts.join("\n") || "(no text content)";
}

function metaOf(v: Json | undefined): Json {
  const m = v?._meta;
  return typeof m === "object" && m !== null ? (m as Json) : {};
}

function printTask(task: Json, heading: string): void {
  line(heading);
  line(`  taskId:         ${String(task.taskId)}`);
  line(`  status:         ${String(task.status)}`);
  if (str(task.statusMessage)) line(`  statusMessage:  ${String(task.statusMessage)}`);
  if (task.pollIntervalMs !== undefined) line(`  pollIntervalMs: ${String(task.pollIntervalMs)}`);
  const meta = metaOf(task);
  const auth = meta[AUTHORIZATION_KEY] as Json | undefined;
  if (auth) line(`  authorization:  ${String(auth.reason)}, remediation ${String(auth.remediation)}`);
  if (str(meta[IMMEDIATE_KEY])) line(`  for the model:  ${String(meta[IMMEDIATE_KEY])}`);
}

/** Prints the outcome of a plain CallToolResult or a terminal task; returns the exit code. */
function printOutcome(status: string, result: Json | undefined, error?: Json): number {
  line(`Final status: ${status}`);
  if (status === "failed") {
    line(`Error:        ${String(error?.code)} ${String(error?.message)}`);
    return EXIT.negative;
  }
  if (status === "cancelled") {
    line("Result:       none (the task was cancelled; the tool did not run)");
    return EXIT.negative;
  }
  const disposition = str(metaOf(result)[DISPOSITION_KEY]);
  if (disposition) line(`Disposition:  ${disposition}`);
  line(`isError:      ${result?.isError === true}`);
  line(`Result:       ${resultText(result).replace(/\n/g, "\n              ")}`);
  if (result?.isError === true) return EXIT.negative;
  // Unknown dispositions count as "possibly executed" and are not a success.
  return disposition === undefined || disposition === "approved-executed" ? EXIT.ok : EXIT.negative;
}

// ---------------------------------------------------------------------------------------------------------------
// questions

type Question = { method?: string; params?: { message?: string; requestedSchema?: { properties?: Record<string, { type?: string; title?: string }>; required?: string[] } } };

/** Asks one line on the terminal; undefined when there is no terminal to ask on. */
async function prompt(question: string): Promise<string | undefined> {
  if (!process.stdin.isTTY) return undefined;
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

/** Fills a form question's fields from the options or the terminal; undefined when it cannot be answered here. */
async function answerForm(q: Question, preset: Record<string, string | undefined>): Promise<Json | undefined> {
  const props = q.params?.requestedSchema?.properties ?? {};
  const required = new Set(q.params?.requestedSchema?.required ?? []);
  line(`Question: ${q.params?.message ?? "(no text)"}`);
  const content: Json = {};
  for (const [field, def] of Object.entries(props)) {
    let v = preset[field];
    if (v === undefined) v = await prompt(`  ${def.title ?? field}${required.has(field) ? "" : " (optional)"}: `);
    if (v === undefined) return undefined;
    if (v === "" && !required.has(field)) continue;
    content[field] = def.type === "boolean" ? /^(y|yes|true)$/i.test(v) : def.type === "number" || def.type === "integer" ? Number(v) : v;
  }
  return content;
}

// ---------------------------------------------------------------------------------------------------------------
// commands

async function waitForTask(session: Session, first: Json, opts: Options): Promise<number> {
  const taskId = String(first.taskId);
  // A CreateTaskResult carries no result or error; a task that is already terminal is read once more in full.
  let task = first.resultType === "task" && TERMINAL.has(String(first.status)) ? await session.getTask(taskId) : first;
  if (!TERMINAL.has(String(task.status))) {
    if (!opts.wait) {
      line(`Not waiting. Resume with: npm run agent -- get ${taskId}`);
      return EXIT.gaveUp;
    }
    const interval = () => opts.pollMs ?? (Number(task.pollIntervalMs) > 0 ? Number(task.pollIntervalMs) : 5000);
    const deadline = Date.now() + opts.timeoutS * 1000;
    line(`Waiting for task ${taskId} (polling every ${interval()} ms, giving up after ${opts.timeoutS} s)...`);
    let seen = `${String(task.status)}|${str(task.statusMessage) ?? ""}`;
    let failing = false;
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.once("SIGINT", onSigint);
    try {
      while (!TERMINAL.has(String(task.status))) {
        const wait = Math.min(interval(), Math.max(0, deadline - Date.now()));
        await sleep(wait, stop.signal);
        if (stop.signal.aborted) {
          line(`Stopped. The task is still ${String(task.status)}; resume with: npm run agent -- get ${taskId}`);
          return EXIT.gaveUp;
        }
        if (Date.now() >= deadline) {
          line(`Gave up after ${opts.timeoutS} s; the task is still ${String(task.status)}. Resume with: npm run agent -- get ${taskId}`);
          return EXIT.gaveUp;
        }
        try {
          const next = await session.getTask(taskId);
          if (!isDetailedTaskV2(next)) throw new RpcError(-32603, "tasks/get returned something that is not a task");
          task = next;
          if (failing) line(`[${clock()}] server reachable again`);
          failing = false;
        } catch (err) {
          const e = err instanceof Error ? err : new Error(String(err));
          if (!transient(e)) throw e;
          if (!failing) line(`[${clock()}] poll failed (${e.message}); retrying`);
          failing = true;
          continue;
        }
        const now = `${String(task.status)}|${str(task.statusMessage) ?? ""}`;
        if (now !== seen) {
          line(`[${clock()}] ${String(task.status)}${str(task.statusMessage) ? `: ${String(task.statusMessage)}` : ""}`);
          seen = now;
        }
        if (task.status === "input_required") {
          const answered = await answerTaskQuestions(session, taskId, task);
          if (!answered) return EXIT.gaveUp;
        }
      }
    } finally {
      process.removeListener("SIGINT", onSigint);
    }
  }
  return printOutcome(String(task.status), task.result as Json | undefined, task.error as Json | undefined);
}

/** A reviewer asked: answer on the terminal with tasks/update, or print the command to answer later. */
async function answerTaskQuestions(session: Session, taskId: string, task: Json): Promise<boolean> {
  const questions = (task.inputRequests ?? {}) as Record<string, Question>;
  const responses: Json = {};
  for (const [key, q] of Object.entries(questions)) {
    const content = await answerForm(q, {});
    if (!content) {
      line(`A reviewer asked: ${q.params?.message ?? key}`);
      line(`Answer with: npm run agent -- answer ${taskId} ${key} "<your answer>"   (then resume with: npm run agent -- get ${taskId})`);
      return false;
    }
    responses[key] = { action: "accept", content };
  }
  await session.updateTask(taskId, responses);
  line(`[${clock()}] answer sent`);
  return true;
}

/** The server needs submission input before it submits (MRTR): answer and retry with the echoed requestState. */
async function answerBeforeSubmission(session: Session, tool: string, args: Json, first: Json, opts: Options): Promise<Json> {
  let result = first;
  for (let round = 0; round < 5 && result.resultType === "input_required"; round++) {
    const responses: Json = {};
    for (const [key, q] of Object.entries((result.inputRequests ?? {}) as Record<string, Question>)) {
      const content = await answerForm(q, { justification: opts.justification, ticket: opts.ticket ?? (opts.justification ? "" : undefined) });
      if (!content) throw new Error("the server needs an answer before it submits the request: pass --justification (and --ticket), or run on a terminal");
      responses[key] = { action: "accept", content };
    }
    result = await session.callToolRaw(tool, args, { inputResponses: responses, ...(typeof result.requestState === "string" ? { requestState: result.requestState } : {}) });
  }
  return result;
}

async function commandAnswer(session: Session, taskId: string, key: string, text: string): Promise<number> {
  const task = await session.getTask(taskId);
  const q = ((task.inputRequests ?? {}) as Record<string, Question>)[key];
  if (task.status !== "input_required" || !q) {
    line(`Task ${taskId} has no outstanding question ${key} (status ${String(task.status)}).`);
    return EXIT.negative;
  }
  const fields = Object.keys(q.params?.requestedSchema?.properties ?? {});
  if (fields.length !== 1) throw new UsageError(`question ${key} has several fields (${fields.join(", ")}); answer it on a terminal with get`);
  await session.updateTask(taskId, { [key]: { action: "accept", content: { [fields[0]]: text } } });
  const after = await session.getTask(taskId);
  printTask(after, "Answer sent. Task now:");
  return EXIT.ok;
}

async function commandCall(session: Session, tool: string, rawArgs: string | undefined, opts: Options): Promise<number> {
  let args: unknown;
  try {
    args = JSON.parse(rawArgs ?? "{}");
  } catch {
    throw new UsageError(`arguments are not JSON: ${rawArgs}`);
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new UsageError("arguments must be a JSON object");
  if (!session.serverHasTasks()) line("note: the server does not declare the tasks extension");
  line(`Calling ${tool} ...`);
  let result = await session.callToolRaw(tool, args as Json);
  if (result.resultType === "input_required") result = await answerBeforeSubmission(session, tool, args as Json, result, opts);
  if (result.resultType === "task") {
    if (!isCreateTaskResultV2(result)) throw new RpcError(-32603, "the server returned a malformed CreateTaskResult");
    printTask(result, "The call needs approval; the server created a task:");
    return waitForTask(session, result, opts);
  }
  return printOutcome("completed (no task)", result);
}

async function commandGet(session: Session, taskId: string, opts: Options): Promise<number> {
  const task = await session.getTask(taskId);
  if (!isDetailedTaskV2(task)) throw new RpcError(-32603, "tasks/get returned something that is not a task");
  printTask(task, "Task:");
  return waitForTask(session, task, opts);
}

async function commandCancel(session: Session, taskId: string): Promise<number> {
  await session.cancelTask(taskId);
  line(`Cancel acknowledged for ${taskId}.`);
  const task = await session.getTask(taskId);
  printTask(task, "Task now:");
  return task.status === "cancelled" ? EXIT.ok : EXIT.negative;
}

async function commandTools(session: Session): Promise<number> {
  const { tools } = await session.client.listTools();
  for (const t of tools) line(`${t.name}${t.title ? ` (${t.title})` : ""}: ${t.description ?? ""}`);
  return EXIT.ok;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      if (err.message) process.stderr.write(`error: ${err.message}\n`);
      process.stderr.write(`${usage()}\n`);
      return EXIT.usage;
    }
    throw err;
  }
  const { opts, command } = parsed;
  const [name, ...rest] = command;
  const need = (n: number) => {
    if (rest.length < n || rest.length > n + (name === "call" ? 1 : 0)) throw new UsageError(`wrong number of arguments for ${name}`);
  };
  let session: Session | undefined;
  try {
    if (!["call", "get", "cancel", "tools", "answer"].includes(name)) throw new UsageError(`unknown command ${name}`);
    need(name === "tools" ? 0 : name === "answer" ? 3 : 1);
    session = await Session.open(opts);
    if (name === "call") return await commandCall(session, rest[0], rest[1], opts);
    if (name === "get") return await commandGet(session, rest[0], opts);
    if (name === "cancel") return await commandCancel(session, rest[0]);
    if (name === "answer") return await commandAnswer(session, rest[0], rest[1], rest[2]);
    return await commandTools(session);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n${usage()}\n`);
      return EXIT.usage;
    }
    if (err instanceof AuthFailed) process.stderr.write(`error: ${err.message}; check --token / COUNTERSIGN_TOKEN\n`);
    else if (err instanceof RpcError) process.stderr.write(`error: JSON-RPC ${err.code}: ${err.message}\n`);
    else process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.protocol;
  } finally {
    await session?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(EXIT.protocol);
  },
);
