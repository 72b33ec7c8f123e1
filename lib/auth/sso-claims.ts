/**
 * From an OpenID Connect provider's claims (ID token or userinfo, as the provider is configured) to what Countersign
 * keeps about the user: role and approver groups through the admin's mapping, and the identity fields. Pure: the
 * sign-in (lib/auth/sso-sign-in.ts) applies the result to the User row at every sign-in.
 */
import type { OidcProviderConfig } from "./sso-config";
import type { Role } from "./session";

export type MappedIdentity = {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string;
  role: Role;
  groups: string[];
};

export type ClaimMapping = { ok: true; identity: MappedIdentity } | { ok: false; reason: string };

const ROLE_STRENGTH: Record<Role, number> = { admin: 3, reviewer: 2, requester: 1 };

/** The claim at `path` (dots reach into nested objects), or undefined. */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  if (path in claims) return claims[path];
  let at: unknown = claims;
  for (const part of path.split(".")) {
    if (!at || typeof at !== "object" || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** The provider's group values: a string array, or one string (some providers send a single group as a string). */
function claimValues(value: unknown): string[] {
  if (typeof value === "string") return value ? [value] : [];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string" && v.length > 0);
  return [];
}

/**
 * Maps one sign-in's claims through `provider`'s mapping. Refused (ok: false) when the subject is missing, or when no
 * role results (no value in roleMap, no mapped group, and no defaultRole).
 */
export function mapClaims(provider: Pick<OidcProviderConfig, "groupsClaim" | "groupMap" | "roleMap" | "defaultRole">, claims: Record<string, unknown>): ClaimMapping {
  const subject = typeof claims.sub === "string" ? claims.sub : "";
  if (!subject) return { ok: false, reason: "the provider sent no subject (sub claim)" };

  const values = claimValues(claimAt(claims, provider.groupsClaim));
  const groups = new Set<string>();
  let role: Role | null = null;
  for (const v of values) {
    if (Object.hasOwn(provider.groupMap, v)) for (const g of provider.groupMap[v]) groups.add(g);
    if (Object.hasOwn(provider.roleMap, v)) {
      const r = provider.roleMap[v];
      if (!role || ROLE_STRENGTH[r] > ROLE_STRENGTH[role]) role = r;
    }
  }
  role ??= groups.size > 0 ? "reviewer" : provider.defaultRole;
  if (!role) return { ok: false, reason: "none of the user's groups at the provider is mapped to a Countersign role or group" };

  const rawEmail = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  const email = /^[^\s@]+@[^\s@]+$/.test(rawEmail) && rawEmail.length <= 320 ? rawEmail : null;
  const emailVerified = email !== null && (claims.email_verified === true || claims.email_verified === "true");
  const nameClaim = [claims.name, claims.preferred_username, email, subject].find((v) => typeof v === "string" && v.trim().length > 0) as string;
  return {
    ok: true,
    identity: { subject, email, emailVerified, name: nameClaim.trim().slice(0, 120), role, groups: [...groups].sort() },
  };
}
