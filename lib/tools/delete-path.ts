/**
 * Deletes a file, folder or symbolic link inside the sandbox folder Countersign owns (COUNTERSIGN_SANDBOX_DIR,
 * default .data/sandbox). Paths are relative to the sandbox; anything that would leave it is refused.
 *
 * Policy judges what will be deleted, never the string the agent typed: the resource is the path resolved the
 * way the operating system resolves it (every folder on the way with its symbolic links followed, "." and ".."
 * applied), relative to the sandbox. So `prod`, `prod/`, `./prod`, `prod/.` and a link elsewhere that leads into
 * prod/ all name the folder `prod`. A symbolic link as the last component is what `rm` removes: the link itself,
 * not what it points to (a trailing "/" or "/." resolves it, as it does for the operating system). run() resolves
 * the path again and refuses unless it still names exactly the approved resource, then deletes that resolved path.
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

export type SandboxKind = "folder" | "file" | "symlink";

/** What a path names in the sandbox right now: the canonical sandbox-relative path and the absolute one. */
export type SandboxTarget = { rel: string; abs: string; kind: SandboxKind };

export class SandboxPathError extends ToolInputError {
  constructor(
    message: string,
    readonly reason: "invalid" | "missing" | "outside",
  ) {
    super(message);
  }
}

async function realpathOrNull(p: string): Promise<string | null> {
  return fs.realpath(p).catch(() => null);
}

/** Resolves `input` inside the sandbox, or throws SandboxPathError (an input error: nothing ran). */
export async function resolveSandboxPath(input: string): Promise<SandboxTarget> {
  const p = input.replace(/\\/g, "/");
  if (p.includes("\0")) throw new SandboxPathError("path must not contain a NUL character.", "invalid");
  if (path.posix.isAbsolute(p)) throw new SandboxPathError("path must be relative to the sandbox.", "invalid");
  const root = await fs.realpath(sandboxDir());
  const segments = p.split("/");
  const last = segments[segments.length - 1];
  let abs: string | null;
  if (last === "" || last === "." || last === "..") {
    abs = await realpathOrNull(`${root}/${p}`);
  } else {
    const parent = await realpathOrNull(`${root}/${segments.slice(0, -1).join("/")}`);
    abs = parent && path.join(parent, last);
  }
  if (abs === root) throw new SandboxPathError("path must name something inside the sandbox, not the sandbox itself.", "invalid");
  if (abs && !abs.startsWith(root + path.sep)) throw new SandboxPathError(`${input} resolves outside the sandbox; refused.`, "outside");
  const stat = abs && (await fs.lstat(abs).catch(() => null));
  if (!abs || !stat) throw new SandboxPathError(`${input} does not exist in the sandbox.`, "missing");
  const kind: SandboxKind = stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "folder" : "file";
  return { rel: path.relative(root, abs).split(path.sep).join("/"), abs, kind };
}

const KIND_WORDS: Record<string, string> = { folder: "the folder", file: "the file", symlink: "the symbolic link" };

export const deletePath: ToolDef<Args> = {
  name: "delete_path",
  title: "Delete a path",
  description:
    "Delete a file, folder or symbolic link in the sandbox (a link itself, not what it points to). " +
    "Deleting prod/ or anything in it needs two SRE approvals.",
  schema,
  mappingVersion: 2,
  policyResource: { entity: "Path", shape: { path: { type: "String" }, kind: { type: "String" } } },
  async resource(args) {
    const target = await resolveSandboxPath(args.path);
    return { type: "path", id: target.rel, properties: { path: target.rel, kind: target.kind } };
  },
  summary(args, resource) {
    const kind = KIND_WORDS[String(resource.properties.kind)] ?? "";
    const asked = args.path === resource.id ? "" : ` (requested as ${args.path})`;
    const link = resource.properties.kind === "symlink" ? ", not what it points to" : "";
    return `Delete ${kind} ${resource.id} in the sandbox${link}${asked}`.replace(/ {2,}/g, " ");
  },
  effect(args) {
    return { does: `deletes ${args.path} from the sandbox`, button: `delete ${args.path.split("/").filter(Boolean).pop() ?? args.path}` };
  },
  async run(args, ctx) {
    let target: SandboxTarget;
    try {
      target = await resolveSandboxPath(args.path);
    } catch (e) {
      if (e instanceof SandboxPathError && e.reason === "missing") throw new ToolError(`${ctx.resource.id} no longer exists; nothing was deleted.`);
      if (e instanceof ToolError) throw new ToolError(`${e.message} Nothing was deleted.`);
      throw e;
    }
    // The path may have been re-pointed (a symbolic link swapped) since policy decided: act only on what was decided.
    if (target.rel !== ctx.resource.id) {
      throw new ToolError(`${args.path} now resolves to ${target.rel}, not to ${ctx.resource.id} as decided; refused, nothing was deleted.`);
    }
    await fs.rm(target.abs, { recursive: true });
    return { text: `Deleted ${KIND_WORDS[target.kind]} ${target.rel} from the sandbox.`, structured: { path: target.rel, kind: target.kind } };
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
