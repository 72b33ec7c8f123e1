/** The gateway demo `npm start` loads: server-filesystem on a demo folder, reads allowed, protected/ writes gated. */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeUpstreams } from "../lib/gateway/connections";
import { registerDemoFilesystem } from "../lib/gateway/demo";
import { call, OPS_BOT, textOf } from "../lib/mcp/testing";
import { resetDb } from "./support/db";

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
  });
});
