/**
 * A path as the operating system will resolve it when a tool acts on it, relative to a root folder: every
 * existing folder on the way with its symbolic links followed, "." and ".." applied. The sandbox's delete tool
 * (./delete-path) resolves this way too; this is the general form for any tool that takes paths under a root
 * (an upstream filesystem server's allowed folder).
 *
 * `follow`: a symbolic link as the last component is followed (what writing, editing or reading a file does);
 * a path that does not exist yet resolves through its deepest existing folder (what creating a file does).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { ToolInputError } from "./types";

export class PathOutsideRootError extends ToolInputError {}

export type ResolvedPath = { rel: string; abs: string; exists: boolean };

/** Resolves `input` (relative to `root`, or absolute) and refuses anything that leaves the root. */
export async function resolveUnderRoot(rootDir: string, input: string): Promise<ResolvedPath> {
  if (typeof input !== "string" || input.length === 0) throw new ToolInputError("a path must be a non-empty string.");
  if (input.includes("\0")) throw new ToolInputError("a path must not contain a NUL character.");
  const root = await fs.realpath(rootDir);
  const lexical = path.resolve(root, input.replace(/^~(?=$|\/)/, "/nonexistent-home"));
  // Walk up to the deepest existing ancestor, resolve it for real, then put back the part that does not exist.
  let existing = lexical;
  const rest: string[] = [];
  let real: string | null = null;
  for (;;) {
    real = await fs.realpath(existing).catch(() => null);
    if (real !== null) break;
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  if (real === null) throw new PathOutsideRootError(`${input} cannot be resolved.`);
  const abs = rest.length ? path.join(real, ...rest) : real;
  if (abs !== root && !abs.startsWith(root + path.sep)) throw new PathOutsideRootError(`${input} resolves outside the server's folder; refused.`);
  const rel = path.relative(root, abs).split(path.sep).join("/") || ".";
  return { rel, abs, exists: rest.length === 0 };
}
