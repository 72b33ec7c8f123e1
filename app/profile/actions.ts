"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { authorizeAction } from "@/lib/auth/session";
import { setEmailNotifications } from "@/lib/notify/preferences";

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
