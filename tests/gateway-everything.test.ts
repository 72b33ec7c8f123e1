/**
 * Countersign as an approval gateway in front of @modelcontextprotocol/server-everything (a server no one here
 * wrote) over Streamable HTTP, started by the test as a child process on a free loopback port. The faults are
 * real: the upstream process is killed during an approved call, is down when a call arrives, and comes back.
 */
import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { freeLoopbackPort } from "../lib/net/free-port";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "../lib/db/client";
import { advanceTask } from "../lib/execution/advance";
import { callUpstream, closeUpstreams } from "../lib/gateway/connections";
import { discoverServer } from "../lib/gateway/discover";
import { listUpstreams, saveUpstream } from "../lib/gateway/servers";
import { call, getTaskRpc, OPS_BOT, textOf } from "../lib/mcp/testing";
import { decide } from "../lib/tasks/decide";
import { requestIdOf, resetDb, userId } from "./support/db";
import { addPolicies, alive, until } from "./support/gateway";

const EVERYTHING = path.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const DISPOSITION = "io.modelcontextprotocol/tool-approval-disposition";
const TOKEN = "upstream-bearer-never-shown-0123456789";
const LONG = "trigger-long-running-operation";

const POLICY = `
@id("everything-tools")
permit (principal, action in [Action::"everything__echo", Action::"everything__get-sum", Action::"slow__${LONG}"], resource);

@id("slow-operations-need-sre")
@reason("Long-running operations need an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action == Action::"slow__${LONG}", resource);
`;

let upstream: ChildProcess | null = null;
let port: number;
let proxy: net.Server;
let proxyPort: number;
/** What the proxy in front of the "slow" registration saw: how many calls of the long-running tool were sent. */
let longCallsSent = 0;


async function listening(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(p, "127.0.0.1");
    c.once("connect", () => (c.destroy(), resolve(true)));
    c.once("error", () => resolve(false));
  });
}

async function startUpstream(): Promise<void> {
  upstream = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "ignore"] });
  await until("server-everything to listen", () => listening(port));
}

async function killUpstream(): Promise<void> {
  const child = upstream!;
  upstream = null;
  child.kill("SIGKILL");
  await until("server-everything to exit", () => child.exitCode !== null || child.signalCode !== null);
}

/** A TCP relay to the upstream that counts the requests of the long-running tool passing through. */
async function startProxy(): Promise<void> {
  proxy = net.createServer((client) => {
    const server = net.connect(port, "127.0.0.1");
    client.on("data", (chunk) => {
      if (chunk.toString("utf8").includes(`"name":"${LONG}"`)) longCallsSent += 1;
    });
    client.pipe(server).pipe(client);
    const end = () => (client.destroy(), server.destroy());
    client.on("error", end);
    server.on("error", end);
    server.on("close", end);
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  proxyPort = (proxy.address() as net.AddressInfo).port;
}

async function approveAsSre(taskId: string): Promise<void> {
  const r = await decide({ requestId: await requestIdOf(taskId), reviewerId: await userId("sasha.sre@countersign.test"), decision: "approve" }, new Date());
  expect(r.ok).toBe(true);
}

beforeAll(async () => {
  process.env.COUNTERSIGN_POLL_INTERVAL_MS = "20";
  port = await freeLoopbackPort();
  await startUpstream();
  await startProxy();
  await resetDb();
  const now = new Date();
  await saveUpstream({ name: "everything", transport: "streamable-http", url: `http://127.0.0.1:${port}/mcp`, credentials: { bearer: TOKEN } }, "user:admin", now);
  await saveUpstream({ name: "slow", transport: "streamable-http", url: `http://127.0.0.1:${proxyPort}/mcp` }, "user:admin", now);
  expect((await discoverServer("everything", now)).added).toEqual(expect.arrayContaining(["echo", "get-sum", LONG]));
  await discoverServer("slow", now);
  await addPolicies(POLICY);
});

afterAll(async () => {
  delete process.env.COUNTERSIGN_POLL_INTERVAL_MS;
  await closeUpstreams();
  if (upstream) await killUpstream();
  await new Promise((r) => proxy?.close(r));
});

describe("gateway in front of server-everything over Streamable HTTP", () => {
  it("forwards an allowed call at once and returns the upstream's result as it gave it", async () => {
    const r = await call("everything__echo", { message: "hello <b>upstream</b>" }, { token: OPS_BOT });
    expect(r.body.result).toMatchObject({ isError: false, content: [{ type: "text", text: "Echo: hello <b>upstream</b>" }] });
    const sum = await call("everything__get-sum", { a: 2, b: 40 }, { token: OPS_BOT });
    expect(textOf(sum.body.result)).toMatch(/42/);
  });

  it("keeps the upstream's credentials sealed: never returned, never in the audit trail", async () => {
    const views = await listUpstreams();
    expect(views.find((v) => v.name === "everything")).toMatchObject({ hasCredentials: true, health: "up" });
    expect(JSON.stringify(views)).not.toContain(TOKEN);
    expect(JSON.stringify(await db().auditEvent.findMany())).not.toContain(TOKEN);
    expect((await db().upstreamServer.findFirstOrThrow({ where: { name: "everything" } })).credentials).toMatch(/^cs1\./);
  });

  it("the upstream killed during an approved call completes outcome-unknown, and the call is never sent again", async () => {
    const r = await call(`slow__${LONG}`, { duration: 60, steps: 60 }, { token: OPS_BOT });
    expect(r.body.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = r.body.result.taskId as string;
    // The approval itself moves the task on: re-evaluated, claimed, forwarded (and the upstream works for a minute).
    const advancing = approveAsSre(taskId);
    await until("the approved call to reach the upstream", () => longCallsSent === 1);
    await killUpstream();
    await advancing;
    const t = await db().task.findUniqueOrThrow({ where: { id: taskId } });
    expect(t.disposition).toBe("outcome-unknown");
    const polled = (await getTaskRpc(taskId, { token: OPS_BOT })).body.result;
    expect(polled.result._meta[DISPOSITION]).toBe("outcome-unknown");
    expect(polled.result.content[0].text).toMatch(/may have run; do not retry/);
    // Back up, polled again: nothing is re-sent.
    await startUpstream();
    await advanceTask(taskId, new Date(Date.now() + 3_600_000));
    await getTaskRpc(taskId, { token: OPS_BOT });
    expect(longCallsSent).toBe(1);
    expect(await db().auditEvent.count({ where: { taskId, type: "execution.claimed" } })).toBe(1);
    await killUpstream();
  });

  it("a call that arrives while the upstream is down gets a clear error saying the tool did not run", async () => {
    expect(upstream).toBeNull();
    const r = await call("everything__echo", { message: "anyone there?" }, { token: OPS_BOT });
    expect(r.body.result.isError).toBe(true);
    expect(textOf(r.body.result)).toMatch(/could not be reached\. The tool did not run/);
    expect((await listUpstreams()).find((v) => v.name === "everything")?.health).toBe("down");
  });

  it("an approved call whose upstream is down waits (retry within the approval's validity) and runs once it is back", async () => {
    const r = await call(`slow__${LONG}`, { duration: 0, steps: 1 }, { token: OPS_BOT });
    const taskId = r.body.result.taskId as string;
    await approveAsSre(taskId);
    expect(await db().task.findUniqueOrThrow({ where: { id: taskId } })).toMatchObject({ status: "working", phase: "retry_wait" });
    await startUpstream();
    await until("the approved call to run", async () => {
      await advanceTask(taskId, new Date(Date.now() + 120_000));
      return (await db().task.findUniqueOrThrow({ where: { id: taskId } })).disposition ?? undefined;
    }).then((d) => expect(d).toBe("approved-executed"));
    expect(longCallsSent).toBe(2);
  });

  it("the upstream back is used again without a restart of Countersign", async () => {
    const r = await call("everything__echo", { message: "back" }, { token: OPS_BOT });
    expect(r.body.result).toMatchObject({ isError: false, content: [{ type: "text", text: "Echo: back" }] });
    expect(alive(upstream!.pid!)).toBe(true);
  });

  it("a deadline further off than a timer can count (2^31-1 ms) still lets the call run", async () => {
    const { id } = await db().upstreamServer.findFirstOrThrow({ where: { name: "everything" } });
    const farOff = new Date(Date.now() + 100 * 365 * 24 * 3_600_000);
    expect(await callUpstream(id, "echo", { message: "far" }, farOff)).toMatchObject({ content: [{ type: "text", text: "Echo: far" }] });
  });

  it("an approved call is bounded by its execution deadline: an upstream still working past it completes outcome-unknown, sent once", async () => {
    const before = longCallsSent;
    process.env.COUNTERSIGN_EXECUTION_DEADLINE_MS = "1500";
    try {
      // The operation takes 30 s; the execution deadline is 1.5 s after the claim.
      const r = await call(`slow__${LONG}`, { duration: 30, steps: 30 }, { token: OPS_BOT });
      const taskId = r.body.result.taskId as string;
      await approveAsSre(taskId);
      const t = await db().task.findUniqueOrThrow({ where: { id: taskId } });
      expect(t).toMatchObject({ status: "completed", disposition: "outcome-unknown" });
      expect(longCallsSent - before).toBe(1);
    } finally {
      delete process.env.COUNTERSIGN_EXECUTION_DEADLINE_MS;
    }
  }, 60_000);
});
