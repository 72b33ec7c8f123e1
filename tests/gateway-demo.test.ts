/** The gateway demo `npm start` loads: server-filesystem on a demo folder, reads allowed, protected/ writes gated. */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeUpstreams } from "../lib/gateway/connections";
import { registerDemoFilesystem } from "../lib/gateway/demo";
import { call, OPS_BOT, textOf } from "../lib/mcp/testing";
import { db } from "../lib/db/client";
import { requestFor } from "../lib/inbox/queries";
import { requestIdOf, resetDb } from "./support/db";

let folder: string;

beforeAll(async () => {
  folder = await fs.mkdtemp(path.join(os.tmpdir(), "cs-gateway-demo-"));
  await resetDb();
});
afterAll(async () => {
  await closeUpstreams();
  await fs.rm(folder, { recursive: true, force: true });
});

describe("the gateway demo", () => {
  it("registers server-filesystem once; reading is allowed and a write into protected/ becomes an SRE approval task", async () => {
    expect(await registerDemoFilesystem(folder, new Date())).toBe(true);
    expect(await registerDemoFilesystem(folder, new Date())).toBe(false);
    const read = await call("filesystem__read_text_file", { path: "protected/release-notes.txt" }, { token: OPS_BOT });
    expect(textOf(read.body.result)).toBe("Release 1.0\n");
    const open = await call("filesystem__write_file", { path: "scratch.txt", content: "x" }, { token: OPS_BOT });
    expect(open.body.result.isError, JSON.stringify(open.body)).toBe(false);
    const gated = await call("filesystem__write_file", { path: "protected/release-notes.txt", content: "Release 2.0\n" }, { token: OPS_BOT });
    expect(gated.body.result).toMatchObject({ resultType: "task", status: "working" });
    expect(await fs.readFile(path.join(folder, "protected", "release-notes.txt"), "utf8")).toBe("Release 1.0\n");

    // The reviewer reads the tool's own description as it was when the call was made, beside the arguments.
    const requestId = await requestIdOf(gated.body.result.taskId);
    const sasha = await db().user.findUniqueOrThrow({ where: { email: "sasha.sre@countersign.test" } });
    const viewer = { id: sasha.id, role: sasha.role, groups: sasha.groups };
    const seen = await requestFor(requestId, viewer, new Date());
    const upstream = await db().upstreamTool.findFirstOrThrow({ where: { name: "write_file", server: { name: "filesystem" } } });
    const described = (upstream.accepted as { description: string }).description;
    expect(described.length).toBeGreaterThan(20);
    expect(seen?.toolInfo?.description).toContain(described);
    expect(seen?.toolStanding).toBeNull();

    // Once the tool changed upstream (held for an admin's review), the reviewer is told an approval will not run it.
    await db().upstreamTool.update({ where: { id: upstream.id }, data: { status: "changed" } });
    expect((await requestFor(requestId, viewer, new Date()))?.toolStanding).toMatch(/changed upstream .* will not run/);
    await db().upstreamServer.update({ where: { name: "filesystem" }, data: { enabled: false } });
    expect((await requestFor(requestId, viewer, new Date()))?.toolStanding).toMatch(/filesystem is disabled/);
    await db().upstreamTool.delete({ where: { id: upstream.id } });
    expect((await requestFor(requestId, viewer, new Date()))?.toolStanding).toMatch(/no longer offers write_file/);
  });
});
