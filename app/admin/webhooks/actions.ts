"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { ADMIN_ROLES, authorizeAction } from "@/lib/auth/session";
import { createWebhook, deactivateWebhook, WebhookInput } from "@/lib/webhooks/admin";

export type WebhookFormState =
  | { status: "idle" }
  | { status: "error"; message: string }
  | { status: "done"; url: string; secret: string };
export type SimpleState = { status: "idle" } | { status: "error"; message: string } | { status: "done"; message: string };

/** Register an endpoint (admins only). Its signing secret is returned here once. */
export async function createWebhookAction(_prev: WebhookFormState, formData: FormData): Promise<WebhookFormState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const url = formData.get("url");
  const parsed = WebhookInput.safeParse({ url: typeof url === "string" ? url.trim() : "", events: formData.getAll("events") });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { status: "error", message: issue?.path[0] === "events" ? "Choose at least one event." : "Enter an http or https URL." };
  }
  const created = await createWebhook(parsed.data, who.user.id, new Date());
  revalidatePath("/admin/webhooks");
  return { status: "done", url: created.webhook.url, secret: created.secret };
}

const deactivateSchema = z.object({ webhookId: z.uuid() });

/** Stop sending to an endpoint (admins only). Deliveries already queued stay in the log. */
export async function deactivateWebhookAction(_prev: SimpleState, formData: FormData): Promise<SimpleState> {
  const who = await authorizeAction(ADMIN_ROLES);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = deactivateSchema.safeParse({ webhookId: formData.get("webhookId") });
  if (!parsed.success) return { status: "error", message: "That endpoint could not be read." };
  const done = await deactivateWebhook(parsed.data.webhookId, who.user.id, new Date());
  revalidatePath("/admin/webhooks");
  return done ? { status: "done", message: "Deactivated." } : { status: "error", message: "No such active endpoint." };
}
