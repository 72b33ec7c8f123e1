"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorizeAction } from "@/lib/auth/session";
import { setEmailNotifications } from "@/lib/notify/preferences";
import { issueSlackLinkCode, unlinkSlackAccount } from "@/lib/slack/link";

export type PreferenceState = { status: "idle" } | { status: "error"; message: string } | { status: "done"; message: string };

const schema = z.object({ email: z.enum(["on", "off"]) });

/** The signed-in person turns their own notification emails on or off. */
export async function setEmailPreferenceAction(_prev: PreferenceState, formData: FormData): Promise<PreferenceState> {
  const who = await authorizeAction(["reviewer", "requester", "admin"]);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = schema.safeParse({ email: formData.get("email") });
  if (!parsed.success) return { status: "error", message: "Choose whether to receive notification emails." };
  const on = parsed.data.email === "on";
  await setEmailNotifications(who.user.id, on, new Date());
  revalidatePath("/profile");
  return { status: "done", message: on ? "Notification emails are on." : "Notification emails are off." };
}

export type SlackLinkState = { status: "idle" } | { status: "error"; message: string } | { status: "code"; code: string; expiresAt: string } | { status: "done"; message: string };

/** A reviewer asks for a one-time code to link their Slack account (sent from Slack as `/countersign link <code>`). */
export async function slackLinkCodeAction(_prev: SlackLinkState, _formData: FormData): Promise<SlackLinkState> {
  const who = await authorizeAction(["reviewer"]);
  if (!who.ok) return { status: "error", message: who.error };
  const { code, expiresAt } = await issueSlackLinkCode(who.user.id, new Date());
  return { status: "code", code, expiresAt: expiresAt.toISOString() };
}

/** A reviewer unlinks their Slack account: Slack buttons pressed by it no longer act for them. */
export async function slackUnlinkAction(_prev: SlackLinkState, _formData: FormData): Promise<SlackLinkState> {
  const who = await authorizeAction(["reviewer"]);
  if (!who.ok) return { status: "error", message: who.error };
  const done = await unlinkSlackAccount(who.user.id, `user:${who.user.id}`, new Date());
  revalidatePath("/profile");
  return { status: "done", message: done ? "Your Slack account is unlinked." : "No Slack account was linked." };
}
