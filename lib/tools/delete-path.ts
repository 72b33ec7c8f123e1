/**
 * Deletes a file or folder inside the sandbox folder Countersign owns (COUNTERSIGN_SANDBOX_DIR, default
 * .data/sandbox). Paths are relative to the sandbox; anything that would leave it is refused.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { ToolError, ToolInputError, type ToolDef } from "./types";

export function sandboxDir(): string {
  return path.resolve(process.env.COUNTERSIGN_SANDBOX_DIR ?? path.join(process.env.COUNTERSIGN_DATA_DIR ?? ".data", "sandbox"));
}

const schema = z.object({ path: z.string().min(1).max(300) }).strict();
type Args = z.infer<typeof schema>;

/** The sandbox-relative, normalized form of a path, or an input error when it escapes the sandbox. */
export function normalizeSandboxPath(p: string): string {
  if (path.isAbsolute(p) || p.includes("\0")) throw new ToolInputError("path must be relative to the sandbox.");
  const norm = path.posix.normalize(p.replace(/\\/g, "/")).replace(/\/+$/, "");
  if (norm === "." || norm === "" || norm.startsWith("../") || norm === "..") throw new ToolInputError("path must name something inside the sandbox.");
  return norm;
}

export const deletePath: ToolDef<Args> = {
  name: "delete_path",
  title: "Delete a path",
  description: "Delete a file or folder in the sandbox. Anything under prod/ needs two SRE approvals.",
  schema,
  mappingVersion: 1,
  async resource(args) {
    const rel = normalizeSandboxPath(args.path);
    const abs = path.join(sandboxDir(), rel);
    const stat = await fs.lstat(abs).catch(() => null);
    if (!stat) throw new ToolInputError(`${rel} does not exist in the sandbox.`);
    return { type: "path", id: rel, properties: { path: rel, kind: stat.isDirectory() ? "folder" : "file" } };
  },
  summary(args) {
    return `Delete ${args.path} in the sandbox`;
  },
  async run(args) {
    const rel = normalizeSandboxPath(args.path);
    const abs = path.join(sandboxDir(), rel);
    const real = await fs.realpath(abs).catch(() => null);
    if (!real) throw new ToolError(`${rel} no longer exists.`);
    const root = await fs.realpath(sandboxDir());
    if (!real.startsWith(root + path.sep)) throw new ToolError(`${rel} resolves outside the sandbox; refused.`);
    await fs.rm(abs, { recursive: true });
    return { text: `Deleted ${rel} from the sandbox.`, structured: { path: rel } };
  },
};

/** Demo sandbox contents, created when missing. */
export async function seedSandbox(): Promise<void> {
  const root = sandboxDir();
  const files: Record<string, string> = {
    "prod/logs/app-2026-11-29.log": "demo production log\n",
    "prod/cache/render-cache.bin": "demo cache\n",
    "staging/tmp/scratch.txt": "demo staging scratch\n",
  };
  for (const [rel, body] of Object.entries(files)) {
    const abs = path.join(root, rel);
    await fs.mkdir(path.dirname(abs), { recursive: true });
    await fs.writeFile(abs, body, { flag: "wx" }).catch(() => {});
  }
}
