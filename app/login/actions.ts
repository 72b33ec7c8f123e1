"use server";

import { AuthError } from "next-auth";
import { headers } from "next/headers";
import { auth, credentialsSchema, signIn, signOut } from "@/lib/auth/auth";
import { DEFAULT_RETURN_PATH, safeReturnPath } from "@/lib/auth/return-path";
import { authorizeAction, crossSiteRefusal } from "@/lib/auth/session";
import { endSession, endSessions } from "@/lib/auth/sessions";
import { ssoConfig } from "@/lib/auth/sso-config";
import { throttledMessage } from "@/lib/auth/throttle";

export type SignInState = { error?: string; email?: string };

/**
 * Signs in with email and password; on success Auth.js redirects (a thrown redirect) to the page the visitor asked
 * for when it is a same-origin path, else to the inbox.
 */
export async function signInWithPassword(_prev: SignInState, formData: FormData): Promise<SignInState> {
  // No session to check yet; still refuse a sign-in posted from another site (login CSRF).
  const refused = crossSiteRefusal(await headers(), true);
  if (refused) return { error: refused.error };
  if (!ssoConfig().passwordSignIn) return { error: "Sign-in with a password is turned off here: use single sign-on." };
  const email = String(formData.get("email") ?? "");
  const parsed = credentialsSchema.safeParse({ email, password: formData.get("password") });
  if (!parsed.success) return { error: "Enter your email address and password.", email };
  try {
    await signIn("credentials", { ...parsed.data, redirectTo: safeReturnPath(formData.get("next")) ?? DEFAULT_RETURN_PATH });
  } catch (error) {
    if (error instanceof AuthError) {
      const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
      if (typeof retryAfterMs === "number") return { error: throttledMessage(retryAfterMs), email };
      return { error: "That email and password do not match an active account.", email };
    }
    throw error; // the redirect after a successful sign-in
  }
  return {};
}

/** Starts a sign-in through one configured OpenID Connect provider: Auth.js redirects (a thrown redirect) to it. */
export async function signInWithProvider(formData: FormData): Promise<void> {
  if (crossSiteRefusal(await headers(), true)) return;
  const id = String(formData.get("provider") ?? "");
  if (!ssoConfig().providers.some((p) => p.id === id)) return;
  await signIn(id, { redirectTo: safeReturnPath(formData.get("next")) ?? DEFAULT_RETURN_PATH });
}

export async function signOutAction(): Promise<void> {
  // Anyone may sign themselves out, but not from another site.
  if (crossSiteRefusal(await headers(), true)) return;
  await endThisSession();
  await signOut({ redirectTo: "/login" });
}

/** Ends the signed-in session server-side (by its id), until it could not be used anyway. */
async function endThisSession(): Promise<void> {
  const user = (await auth())?.user as { sid?: unknown; signedInAt?: unknown } | undefined;
  if (typeof user?.sid !== "string" || !user.sid) return;
  await endSession(user.sid, typeof user.signedInAt === "number" ? user.signedInAt : null, new Date());
}

/**
 * Signs the person out of every browser and device they are signed in with (the other sessions are refused at
 * their next request, audited), then out of this one.
 */
export async function signOutEverywhereAction(): Promise<void> {
  const who = await authorizeAction(["admin", "reviewer", "requester"]);
  if (!who.ok) return;
  await endSessions(who.user.id, `user:${who.user.id}`, new Date());
  await signOut({ redirectTo: "/login" });
}
