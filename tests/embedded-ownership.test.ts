/**
 * Only one process may own an embedded data folder (two PGlite instances on one folder lose writes silently):
 * a second opener connects to the running owner; after the owner dies (SIGKILL), the next opener takes the folder
 * over and finds the committed data.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbedded } from "../lib/db/embedded";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "countersign-owner-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function query(url: string, sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe("embedded database folder ownership", () => {
  it("a second opener joins the owner instead of opening the folder; after the owner is killed the folder is taken over intact", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "tests/workers/own-embedded.ts", dir], { stdio: ["ignore", "pipe", "inherit"] });
    const first = await new Promise<{ url: string; owned: boolean; pid: number }>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line));
      });
      child.once("exit", (code) => reject(new Error(`owner exited early (${code})`)));
    });
    expect(first.owned).toBe(true);

    const second = await startEmbedded({ dataDir: dir });
    expect(second).toMatchObject({ owned: false, url: first.url });
    expect(await query(second.url, "SELECT v FROM marks")).toEqual([{ v: "written by the first owner" }]);
    await second.stop(); // joining never stops the owner

    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const third = await startEmbedded({ dataDir: dir });
    try {
      expect(third.owned).toBe(true);
      expect(await query(third.url, "SELECT v FROM marks")).toEqual([{ v: "written by the first owner" }]);
    } finally {
      await third.stop();
    }
    expect(fs.existsSync(path.join(dir, "owner.json"))).toBe(false);
  });
});
