import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveUnderRoot } from "./resolve-path";

let base: string;
let root: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "cs-resolve-"));
  root = path.join(base, "root");
  await fs.mkdir(path.join(root, "protected"), { recursive: true });
  await fs.mkdir(path.join(root, "open"), { recursive: true });
  await fs.writeFile(path.join(root, "protected", "secret.txt"), "x");
  await fs.symlink(path.join(root, "protected"), path.join(root, "open", "shortcut"));
  await fs.symlink(path.join(root, "protected", "secret.txt"), path.join(root, "open", "note.txt"));
  await fs.mkdir(path.join(base, "elsewhere"));
  await fs.symlink(path.join(base, "elsewhere"), path.join(root, "open", "away"));
});
afterAll(() => fs.rm(base, { recursive: true, force: true }));

describe("resource mapping: a path resolved as the operating system would, under the server's folder", () => {
  it("names one canonical path for every spelling, relative or absolute", async () => {
    for (const p of ["protected/a.txt", "./protected/a.txt", "open/../protected/a.txt", path.join(root, "protected/a.txt")]) {
      expect((await resolveUnderRoot(root, p)).rel).toBe("protected/a.txt");
    }
  });

  it("follows a symbolic link on the way and as the last component", async () => {
    expect((await resolveUnderRoot(root, "open/shortcut/new.txt")).rel).toBe("protected/new.txt");
    expect((await resolveUnderRoot(root, "open/note.txt")).rel).toBe("protected/secret.txt");
  });

  it("resolves a path that does not exist yet through its deepest existing folder", async () => {
    const r = await resolveUnderRoot(root, "open/shortcut/deep/er/x.txt");
    expect(r).toMatchObject({ rel: "protected/deep/er/x.txt", exists: false });
  });

  it("refuses paths that leave the folder by .., by an absolute path or by a symbolic link", async () => {
    await expect(resolveUnderRoot(root, "../elsewhere/x")).rejects.toThrow(/outside/);
    await expect(resolveUnderRoot(root, "/etc/passwd")).rejects.toThrow(/outside/);
    await expect(resolveUnderRoot(root, "open/away/x")).rejects.toThrow(/outside/);
    await expect(resolveUnderRoot(root, "a\0b")).rejects.toThrow(/NUL/);
  });
});
