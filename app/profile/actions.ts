"use server";

import { revalidatePath } from "next/cache";
import { headers } from "next/headers";
import { z } from "zod";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { authorizeAction, REVIEW_ROLES } from "@/lib/auth/session";
import { setEmailNotifications } from "@/lib/notify/preferences";
import { createDelegation, endDelegation } from "@/lib/approvals/delegation";
import { issueSlackLinkCode, unlinkSlackAccount } from "@/lib/slack/link";
import { beginPasskeyRegistration, finishPasskeyRegistration, removePasskey } from "@/lib/passkeys/registration";
import { relyingParty } from "@/lib/passkeys/relying-party";
import { PasskeyNonce, readAttestation } from "@/lib/passkeys/wire";

/** Who keeps passkeys: the people who approve. */
const PASSKEY_ROLES = REVIEW_ROLES;

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

export type PasskeyRegistrationStart =
  | { ok: true; nonce: string; options: PublicKeyCredentialCreationOptionsJSON }
  | { ok: false; error: string };

async function passkeyParty() {
  return relyingParty((await headers()).get("origin"));
}

/** The signed-in reviewer starts registering a passkey: creation options with a single-use challenge. */
export async function beginPasskeyAction(): Promise<PasskeyRegistrationStart> {
  const who = await authorizeAction(PASSKEY_ROLES);
  if (!who.ok) return { ok: false, error: who.error };
  const rp = await passkeyParty();
  if (!rp) return { ok: false, error: "Passkeys are not configured on this server." };
  return { ok: true, ...(await beginPasskeyRegistration(who.user, rp, new Date())) };
}

const finishSchema = z.object({ nonce: PasskeyNonce, name: z.string().trim().min(1, "Name the passkey.").max(60, "Keep the name under 60 characters.") });

/** The signed-in reviewer finishes registering: the attestation is verified and the passkey kept (audited). */
export async function finishPasskeyAction(input: { nonce: string; name: string; response: unknown }): Promise<{ ok: true } | { ok: false; error: string }> {
  const who = await authorizeAction(PASSKEY_ROLES);
  if (!who.ok) return { ok: false, error: who.error };
  const parsed = finishSchema.safeParse(input);
  const response = readAttestation(input?.response);
  if (!parsed.success) return { ok: false, error: parsed.error.issues[0]?.message ?? "That passkey could not be read." };
  if (!response) return { ok: false, error: "That passkey could not be read. Try again." };
  const rp = await passkeyParty();
  if (!rp) return { ok: false, error: "Passkeys are not configured on this server." };
  const r = await finishPasskeyRegistration({ userId: who.user.id, name: parsed.data.name, nonce: parsed.data.nonce, response }, rp, new Date());
  revalidatePath("/profile");
  return r.ok ? { ok: true } : r;
}

/** The signed-in reviewer removes one of their own passkeys. */
export async function removePasskeyAction(formData: FormData): Promise<void> {
  const who = await authorizeAction(PASSKEY_ROLES);
  if (!who.ok) return;
  const id = z.string().min(1).max(1000).safeParse(formData.get("passkeyId"));
  if (!id.success) return;
  await removePasskey(who.user.id, id.data, new Date());
  revalidatePath("/profile");
}

export type DelegationState = { status: "idle" } | { status: "error"; message: string } | { status: "done"; message: string };

const delegationSchema = z.object({
  delegateId: z.string().min(1, "Choose whom to delegate to.").max(100),
  startsAt: z.string().datetime({ message: "Give the start as a date and time." }),
  endsAt: z.string().datetime({ message: "Give the end as a date and time." }),
});

/** A reviewer delegates to another reviewer of their groups for a period (out of office); checked and audited in lib. */
export async function createDelegationAction(_prev: DelegationState, formData: FormData): Promise<DelegationState> {
  const who = await authorizeAction(["reviewer"]);
  if (!who.ok) return { status: "error", message: who.error };
  const parsed = delegationSchema.safeParse({ delegateId: formData.get("delegateId"), startsAt: formData.get("startsAt"), endsAt: formData.get("endsAt") });
  if (!parsed.success) return { status: "error", message: parsed.error.issues[0]?.message ?? "The delegation is incomplete." };
  const res = await createDelegation(
    { delegatorId: who.user.id, delegateId: parsed.data.delegateId, startsAt: new Date(parsed.data.startsAt), endsAt: new Date(parsed.data.endsAt) },
    new Date(),
  );
  if (!res.ok) return { status: "error", message: res.error };
  revalidatePath("/profile");
  return { status: "done", message: "Your delegation is saved." };
}

/** The delegator ends one of their delegations now; audited. */
export async function endDelegationAction(formData: FormData): Promise<void> {
  const who = await authorizeAction(["reviewer"]);
  if (!who.ok) return;
  const id = z.string().min(1).max(100).safeParse(formData.get("id"));
  if (!id.success) return;
  await endDelegation(id.data, who.user.id, new Date());
  revalidatePath("/profile");
}
