/**
 * A stdio upstream does not outlive Countersign: the server process that started it is killed with SIGKILL (no
 * cleanup runs), and the upstream process is gone soon after (its stdin closes with the parent).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveUpstream } from "../lib/gateway/servers";
import { resetDb } from "./support/db";
import { alive, until } from "./support/gateway";
import { startWorker } from "./support/proof";

let folder: string;

beforeAll(async () => {
  folder = await fs.mkdtemp(path.join(os.tmpdir(), "cs-gateway-sup-"));
  await resetDb();
  const entry = path.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  await saveUpstream({ name: "filesystem", transport: "stdio", command: process.execPath, args: [entry, folder] }, "user:admin", new Date());
});
afterAll(() => fs.rm(folder, { recursive: true, force: true }));

describe("supervised stdio upstreams", () => {
  it("leaves no orphan process when Countersign's process is killed", async () => {
    const worker = startWorker("gateway-worker.ts", ["filesystem"]);
    const { pid } = JSON.parse(await worker.nextLine()) as { pid: number };
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    worker.child.kill("SIGKILL");
    await until("the upstream process to exit after its parent died", () => !alive(pid));
  });
});
