/**
 * Demo data for the gateway (not production code): @modelcontextprotocol/server-filesystem registered over stdio
 * on a demo folder beside the demo shop, with reads allowed and writes into protected/ needing an SRE approval.
 * Idempotent: a server already registered under the name is left as the admin last saved it.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { db } from "../db/client";
import { currentDocument, saveDocument } from "../policy/store";
import { closeUpstreams } from "./connections";
import { discoverServer } from "./discover";
import { applyAnnotationDefaults } from "./defaults";
import { saveUpstream } from "./servers";

export const DEMO_FILESYSTEM = "filesystem";

export const DEMO_FILESYSTEM_POLICY = `@id("filesystem-writes")
permit (principal, action in [Action::"filesystem__write_file", Action::"filesystem__edit_file", Action::"filesystem__move_file"], resource);

@id("filesystem-protected-writes")
@reason("Writes under protected/ need an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action in [Action::"filesystem__write_file", Action::"filesystem__edit_file"], resource)
when { resource.path_within.contains("protected") };

@id("filesystem-protected-moves")
@reason("Moves into or out of protected/ need an SRE approval.")
@approvers("sre")
@quorum("1")
forbid (principal, action == Action::"filesystem__move_file", resource)
when { resource.destination_within.contains("protected") || resource.source_within.contains("protected") };`;

export async function registerDemoFilesystem(folder: string, now: Date): Promise<boolean> {
  if (await db().upstreamServer.findUnique({ where: { name: DEMO_FILESYSTEM } })) return false;
  await fs.mkdir(path.join(folder, "protected"), { recursive: true });
  await fs.writeFile(path.join(folder, "README.txt"), "Demo files served through Countersign's gateway.\n", { flag: "wx" }).catch(() => {});
  await fs.writeFile(path.join(folder, "protected", "release-notes.txt"), "Release 1.0\n", { flag: "wx" }).catch(() => {});
  const root = await fs.realpath(folder);
  const entry = path.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  await saveUpstream(
    { name: DEMO_FILESYSTEM, transport: "stdio", command: process.execPath, args: [entry, root], pathArgs: ["path", "paths", "source", "destination"], root },
    "system:seed",
    now,
  );
  try {
    await discoverServer(DEMO_FILESYSTEM, now);
    await applyAnnotationDefaults(DEMO_FILESYSTEM, { approvers: "sre" }, "system:seed", now);
    const doc = await currentDocument();
    if (!doc.body.policies.includes("filesystem-protected-writes")) {
      const r = await saveDocument({ ...doc.body, policies: `${doc.body.policies}\n\n${DEMO_FILESYSTEM_POLICY}\n` }, "system:seed", now, { check: async () => [], note: "Demo filesystem rules" });
      if (!r.ok) throw new Error(r.problems.map((p) => p.message).join("; "));
    }
  } finally {
    await closeUpstreams();
  }
  return true;
}
