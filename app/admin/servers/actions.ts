"use server";

import { revalidatePath } from "next/cache";
import { redirect } from "next/navigation";
import { ADMIN_ROLES, authorizeAction } from "@/lib/auth/session";
import { applyAnnotationDefaults } from "@/lib/gateway/defaults";
import { acceptToolChange, discoverServer, setSummaryTemplate } from "@/lib/gateway/discover";
import { saveUpstream } from "@/lib/gateway/servers";

function text(formData: FormData, key: string): string {
  const v = formData.get(key);
  return typeof v === "string" ? v.trim() : "";
}

function back(params: Record<string, string>): never {
  revalidatePath("/admin/servers");
  redirect(`/admin/servers?${new URLSearchParams(params).toString()}`);
}

/** The error words for the page; an unexpected failure says only that it failed (its message may quote secrets). */
function problem(e: unknown): string {
  return e instanceof Error && e.constructor.name !== "Error" ? e.message : "The server could not be reached or the change failed.";
}

/** Register or update an upstream server (admins only), then discover its tools. Credentials are write-only. */
export async function saveServerAction(formData: FormData): Promise<void> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) back({ error: who.error });
  const transport = text(formData, "transport");
  const name = text(formData, "name");
  const common = {
    name,
    pathArgs: text(formData, "pathArgs").split(",").map((s) => s.trim()).filter(Boolean),
    ...(text(formData, "root") ? { root: text(formData, "root") } : {}),
  };
  const bearer = text(formData, "bearer");
  const header = text(formData, "headerName");
  const input =
    transport === "stdio"
      ? {
          ...common,
          transport,
          command: text(formData, "command"),
          args: text(formData, "args").split("\n").map((s) => s.trim()).filter(Boolean),
          env: Object.fromEntries(
            text(formData, "env")
              .split("\n")
              .map((l) => l.trim())
              .filter(Boolean)
              .map((l) => [l.slice(0, Math.max(0, l.indexOf("="))) || l, l.includes("=") ? l.slice(l.indexOf("=") + 1) : ""]),
          ),
        }
      : {
          ...common,
          transport,
          url: text(formData, "url"),
          ...(bearer ? { credentials: { bearer } } : header ? { credentials: { header, value: text(formData, "headerValue") } } : {}),
        };
  const now = new Date();
  try {
    await saveUpstream(input, `user:${who.user.id}`, now);
  } catch (e) {
    back({ error: problem(e) });
  }
  let note = `Saved ${name}.`;
  try {
    const report = await discoverServer(name, now);
    note += ` Tools: ${report.added.length} new, ${report.changed.length} changed, ${report.unchanged.length} unchanged.`;
    const approvers = text(formData, "defaultsApprovers");
    if (approvers) {
      const set = await applyAnnotationDefaults(name, { approvers }, `user:${who.user.id}`, now);
      note += ` Defaults from annotations set for ${set.length} tools.`;
    }
  } catch (e) {
    note += ` Discovery failed: ${problem(e)}`;
  }
  back({ note });
}

/** Discover a server's tools again (admins only): a changed tool is held for review. */
export async function discoverAction(formData: FormData): Promise<void> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) back({ error: who.error });
  const name = text(formData, "server");
  try {
    const r = await discoverServer(name, new Date());
    back({ note: `${name}: ${r.added.length} new, ${r.changed.length} changed, ${r.removed.length} removed, ${r.unchanged.length} unchanged.` });
  } catch (e) {
    if (e && typeof e === "object" && "digest" in e) throw e;
    back({ error: `${name}: ${problem(e)}` });
  }
}

/** Accept the changed snapshot the admin reviewed (its digest), so the tool is offered again (admins only). */
export async function acceptToolAction(formData: FormData): Promise<void> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) back({ error: who.error });
  const server = text(formData, "server");
  const tool = text(formData, "tool");
  try {
    await acceptToolChange(server, tool, text(formData, "digest"), `user:${who.user.id}`, new Date());
  } catch (e) {
    back({ error: problem(e) });
  }
  back({ note: `Accepted the new version of ${server}__${tool}.` });
}

/**
 * Set or clear (an empty field) the one-line summary reviewers read for a tool, e.g. `write {path}` (admins only).
 * Placeholders must name the tool's arguments; the change is audited.
 */
export async function setSummaryAction(formData: FormData): Promise<void> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) back({ error: who.error });
  const server = text(formData, "server");
  const tool = text(formData, "tool");
  const template = text(formData, "template");
  try {
    await setSummaryTemplate(server, tool, template || null, `user:${who.user.id}`, new Date());
  } catch (e) {
    back({ error: problem(e) });
  }
  back({ note: template ? `Reviewers now read ${server}__${tool} as "${template}".` : `${server}__${tool} uses the generic summary again.` });
}
