/**
 * Authenticated agents in memory (agent-cache.ts): a known token costs no statement, and every change to what
 * authentication reads is seen: at once for this process's own revocations and user changes, on its notification
 * for another connection's, and through the database while the listener is lost. Runs on both databases: on the
 * embedded one the notifications cross connections only through lib/db/embedded.ts's forwarding.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { countStatements } from "../../scripts/bench-support";
import { resetDb, userId } from "../../tests/support/db";
import { startProxy } from "../../tests/support/tcp-proxy";
import { revokeAgent } from "../admin/agents";
import { updateUser } from "../admin/people";
import { databaseUrl } from "../db/url";
import { DEMO_AGENTS } from "../db/seed";
import { agentTokenVerifier, policyHeadOf, principalOf } from "../mcp/auth";
import { agentCacheGeneration, agentCacheListening, cachedAgent, changesSeen, rememberAgent, startAgentCache, stopAgentCache } from "./agent-cache";

const OPS = DEMO_AGENTS[1];

/** The agent a token authenticates now, or "refused". */
async function who(token: string = OPS.token): Promise<string> {
  return agentTokenVerifier.verifyAccessToken(token).then(
    (a) => principalOf(a)?.agentName ?? "none",
    () => "refused",
  );
}

/** A statement on a connection of its own, as another process would make it. */
async function elsewhere(sql: string, values: unknown[] = []): Promise<void> {
  const c = new pg.Client({ connectionString: databaseUrl() });
  await c.connect();
  try {
    await c.query(sql, values);
  } finally {
    await c.end();
  }
}

/** The statements `f` sends (the listener's connection sends none while it listens). */
async function statementsOf<T>(f: () => Promise<T>): Promise<{ value: T; statements: number }> {
  const counter = await countStatements();
  try {
    return await counter.measure(f);
  } finally {
    counter.restore();
  }
}

beforeEach(resetDb);
afterEach(stopAgentCache);

describe("with the listener listening", () => {
  beforeEach(async () => {
    await startAgentCache();
    expect(agentCacheListening()).toBe(true);
  });

  it("answers a known token's second request from memory, and a refused token from the database every time", async () => {
    expect(await who()).toBe("ops-bot");
    expect(await statementsOf(who)).toMatchObject({ value: "ops-bot", statements: 0 });
    const unknown = "cs_unknown-token-unknown-token-unknown-0001";
    expect(await who(unknown)).toBe("refused");
    expect((await statementsOf(() => who(unknown))).statements).toBe(1);
  });

  it("refuses a token at once after this process revokes its agent", async () => {
    expect(await who()).toBe("ops-bot");
    const [{ id }] = await (await import("../db/client")).db().agent.findMany({ where: { name: "ops-bot" }, select: { id: true } });
    expect(await revokeAgent(id, await userId("admin@countersign.test"), new Date())).toBe(true);
    expect(await who()).toBe("refused");
    expect(agentCacheListening()).toBe(true);
  });

  it("reads an agent's user again at once after this process changes the user", async () => {
    const before = await agentTokenVerifier.verifyAccessToken(OPS.token);
    expect(principalOf(before)?.userGroups).not.toContain("treasury");
    const otto = await userId(OPS.owner);
    await updateUser({ userId: otto, role: "requester", groups: [...(principalOf(before)?.userGroups ?? []), "treasury"], active: true }, await userId("admin@countersign.test"), new Date());
    expect(principalOf(await agentTokenVerifier.verifyAccessToken(OPS.token))?.userGroups).toContain("treasury");
    await updateUser({ userId: otto, role: "requester", groups: [], active: false }, await userId("admin@countersign.test"), new Date());
    expect(await who()).toBe("refused");
  });

  it("sees another connection's revocation, user change and policy change once its notification has arrived", async () => {
    expect(await who()).toBe("ops-bot");
    const head = policyHeadOf(await agentTokenVerifier.verifyAccessToken(OPS.token))!;
    await elsewhere(`UPDATE "ChangeEpoch" SET value = nextval('"ChangeEpoch_value_seq"') WHERE name = 'rules'`);
    // Notifications arrive in commit order: once this one is back, the change's own has been received.
    await changesSeen();
    expect(agentCacheListening()).toBe(true);
    const next = policyHeadOf(await agentTokenVerifier.verifyAccessToken(OPS.token))!;
    expect(next.rules).not.toBe(head.rules);
    expect(next.doc).toBe(head.doc);

    await elsewhere(`UPDATE "User" SET name = 'Otto Renamed' WHERE email = $1`, [OPS.owner]);
    await changesSeen();
    expect(principalOf(await agentTokenVerifier.verifyAccessToken(OPS.token))?.userName).toBe("Otto Renamed");

    await elsewhere(`UPDATE "Agent" SET "revokedAt" = now() WHERE name = 'ops-bot'`);
    await changesSeen();
    expect(agentCacheListening()).toBe(true);
    expect(await who()).toBe("refused");
  });

  it("keeps nothing read in a generation a change has ended", async () => {
    const generation = agentCacheGeneration();
    expect(generation).not.toBeNull();
    await elsewhere(`UPDATE "Agent" SET name = name WHERE name = 'ops-bot'`);
    await changesSeen();
    expect(agentCacheGeneration()).not.toBe(generation);
    rememberAgent("read-before-the-change", { stale: true }, generation!);
    expect(cachedAgent("read-before-the-change")).toBeUndefined();
    rememberAgent("read-after-the-change", { stale: false }, agentCacheGeneration()!);
    expect(cachedAgent("read-after-the-change")).toEqual({ stale: false });
  });

  it("does not announce a change to what authentication does not read", async () => {
    const generation = agentCacheGeneration();
    await elsewhere(`UPDATE "User" SET "emailNotifications" = NOT "emailNotifications" WHERE email = $1`, [OPS.owner]);
    await changesSeen();
    expect(agentCacheGeneration()).toBe(generation);
  });
});

describe("when the listener's connection is lost", () => {
  it("authenticates every request by the database until it listens again", async () => {
    const proxy = await startProxy(new URL(databaseUrl()));
    try {
      const viaProxy = new URL(databaseUrl());
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      await startAgentCache({ url: viaProxy.toString() });
      expect(agentCacheListening()).toBe(true);
      expect(await who()).toBe("ops-bot");
      expect((await statementsOf(who)).statements).toBe(0);

      proxy.cut();
      await vi.waitFor(() => expect(agentCacheListening()).toBe(false), { timeout: 10_000, interval: 5 });
      // No notification can reach this process now; the database still answers.
      await elsewhere(`UPDATE "Agent" SET "revokedAt" = now() WHERE name = 'ops-bot'`);
      expect(await who()).toBe("refused");
      await elsewhere(`UPDATE "Agent" SET "revokedAt" = NULL WHERE name = 'ops-bot'`);
      expect((await statementsOf(who)).statements).toBe(1);

      proxy.restore();
      await vi.waitFor(() => expect(agentCacheListening()).toBe(true), { timeout: 15_000, interval: 20 });
      expect(await who()).toBe("ops-bot");
      expect((await statementsOf(who)).statements).toBe(0);
    } finally {
      await stopAgentCache();
      await proxy.close();
    }
  });

  it("a revocation or a user change by this process returns only when the listener has its notification, or is no longer trusted", async () => {
    const proxy = await startProxy(new URL(databaseUrl()));
    try {
      const viaProxy = new URL(databaseUrl());
      viaProxy.host = `127.0.0.1:${proxy.port}`;
      await startAgentCache({ url: viaProxy.toString(), seenTimeoutMs: 300 });
      expect(await who()).toBe("ops-bot");
      expect(await who(DEMO_AGENTS[0].token)).toBe("support-bot");
      const admin = await userId("admin@countersign.test");

      // Notifications held back: the listener cannot know of the change, so it must stop answering.
      proxy.pause();
      await updateUser({ userId: await userId(DEMO_AGENTS[0].owner), role: "requester", groups: [], active: false }, admin, new Date());
      expect(agentCacheListening()).toBe(false);
      expect(await who(DEMO_AGENTS[0].token)).toBe("refused");
      proxy.resume();
      await vi.waitFor(() => expect(agentCacheListening()).toBe(true), { timeout: 15_000, interval: 20 });
      expect(await who()).toBe("ops-bot");

      proxy.pause();
      const [{ id }] = await (await import("../db/client")).db().agent.findMany({ where: { name: "ops-bot" }, select: { id: true } });
      expect(await revokeAgent(id, admin, new Date())).toBe(true);
      expect(agentCacheListening()).toBe(false);
      expect(await who()).toBe("refused");
    } finally {
      proxy.resume();
      await stopAgentCache();
      await proxy.close();
    }
  });

  it("stops answering from memory when it cannot check that it has every change", async () => {
    await startAgentCache();
    expect(await who()).toBe("ops-bot");
    // Whether the listener has every change cannot be known when the check cannot be sent.
    await changesSeen(async () => {
      throw new Error("the database refused the notification");
    });
    expect(agentCacheListening()).toBe(false);
    expect((await statementsOf(who)).statements).toBe(1);
  });
});
