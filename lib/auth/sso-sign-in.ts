/**
 * A sign-in through an OpenID Connect provider, applied to the database: the user is found by (issuer, subject), or
 * created on first sign-in; their role and approver groups are set from the claims at every sign-in, so a user
 * removed from a group at the provider loses that group here at their next sign-in. User.groupsSource records the
 * provider. Role and groups are what lib/auth/session.ts re-reads for every authorization, and what an approval's
 * eligibility is re-checked against when a task is claimed, so updating the row is all that is needed.
 *
 * An existing local user with the same email is linked only when the provider is configured with
 * linkVerifiedEmail and says the email is verified (email_verified); otherwise the sign-in is refused, so an account
 * at a provider can never take over a local account by naming its email.
 */
import { db } from "../db/client";
import { appendAudit } from "../audit/append";
import { mapClaims } from "./sso-claims";
import type { OidcProviderConfig } from "./sso-config";
import type { SignedInUser } from "./sign-in";

export type SsoSignIn = { ok: true; user: SignedInUser; created: boolean; linked: boolean } | { ok: false; reason: string };

type Provider = Pick<OidcProviderConfig, "id" | "issuer" | "groupsClaim" | "groupMap" | "roleMap" | "defaultRole" | "linkVerifiedEmail">;

export async function signInWithIdentity(provider: Provider, claims: Record<string, unknown>, now: Date = new Date()): Promise<SsoSignIn> {
  const mapped = mapClaims(provider, claims);
  if (!mapped.ok) return mapped;
  const m = mapped.identity;
  // The configured issuer: Auth.js checks the ID token's iss against it (discovery must answer with exactly it), and
  // userinfo answers carry none, so it names the provider the same way whichever claims are read.
  const issuer = provider.issuer;

  return db().$transaction(async (tx) => {
    const identity = await tx.externalIdentity.findUnique({ where: { issuer_subject: { issuer, subject: m.subject } }, include: { user: true } });
    let user = identity?.user ?? null;
    let created = false;
    let linked = false;

    if (!user) {
      if (!m.email) return { ok: false as const, reason: "the provider sent no email address for a new user" };
      const existing = await tx.user.findUnique({ where: { email: m.email } });
      if (existing) {
        if (!provider.linkVerifiedEmail || !m.emailVerified)
          return { ok: false as const, reason: "a Countersign account with this email exists and is not linked to this provider" };
        user = existing;
        linked = true;
      } else {
        user = await tx.user.create({
          // No password: an empty hash never matches (lib/auth/sign-in.ts).
          data: { email: m.email, name: m.name, passwordHash: "", role: m.role, groups: m.groups, groupsSource: provider.id },
        });
        created = true;
      }
      await tx.externalIdentity.create({ data: { issuer, subject: m.subject, providerId: provider.id, userId: user.id, createdAt: now, lastSignInAt: now } });
    } else {
      await tx.externalIdentity.update({ where: { id: identity!.id }, data: { providerId: provider.id, lastSignInAt: now } });
    }
    if (!user.active) return { ok: false as const, reason: "the Countersign account is deactivated" };

    const before = { role: user.role, groups: user.groups, groupsSource: user.groupsSource };
    // The email follows the provider when no other user has it; the name always does.
    const emailFree = m.email && m.email !== user.email && !(await tx.user.findUnique({ where: { email: m.email }, select: { id: true } }));
    const after = await tx.user.update({
      where: { id: user.id },
      data: { role: m.role, groups: m.groups, groupsSource: provider.id, name: m.name, ...(emailFree ? { email: m.email! } : {}) },
    });
    const changed = created || linked || before.role !== after.role || before.groupsSource !== after.groupsSource || before.groups.join(",") !== after.groups.join(",");
    if (changed) {
      await appendAudit(tx, {
        type: created ? "user.created" : "user.updated",
        actor: `oidc:${provider.id}`,
        data: { userId: after.id, via: "single-sign-on", linked, before: created ? null : before, after: { role: after.role, groups: after.groups, groupsSource: after.groupsSource } },
        at: now,
      });
    }
    return { ok: true as const, created, linked, user: { id: after.id, name: after.name, email: after.email, role: after.role, groups: after.groups } };
  });
}
