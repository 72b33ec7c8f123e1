/**
 * Single sign-on settings, read from the environment in one place:
 *
 *  - COUNTERSIGN_OIDC_PROVIDERS: a JSON array of OpenID Connect providers (unset or empty: none, and sign-in is
 *    exactly the email + password form). One variable rather than numbered ones because each provider carries a
 *    nested claim mapping (claim value -> groups, claim value -> role) that numbered flat variables express badly.
 *  - COUNTERSIGN_PASSWORD_SIGN_IN: "on" (default) or "off". Off refuses email + password sign-in and hides the form;
 *    it needs at least one provider, or nobody could sign in.
 *
 * `parseSsoConfig` validates everything and throws one SsoConfigError listing every problem, so a bad value stops the
 * server at start (scripts/start.ts) with a message naming the provider and the field.
 */
import { z } from "zod";
import type { Role } from "./session";

export type ClaimsSource = "id_token" | "userinfo";

export type OidcProviderConfig = {
  /** Auth.js provider id: the callback URL is /api/auth/callback/<id>; also what User.groupsSource records. */
  id: string;
  /** Shown on the sign-in button ("Sign in with <name>") and on the admin console's people page. */
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  /** Where groups and roles are read from: the ID token's claims, or the userinfo endpoint's answer. */
  claimsFrom: ClaimsSource;
  /** The claim holding the user's groups at the provider; a dotted path reaches nested claims (realm_access.roles). */
  groupsClaim: string;
  /** Provider group (claim value) -> Countersign approver groups. Values not listed are ignored. */
  groupMap: Record<string, string[]>;
  /** Provider group (claim value) -> Countersign role; the strongest wins (admin, then reviewer, then requester). */
  roleMap: Record<string, Role>;
  /** Role of a user none of whose values is in roleMap: "reviewer" when they got any group, else this (null: refused). */
  defaultRole: Role | null;
  /** Link a first sign-in to an existing local user with the same email, only when the provider says it is verified. */
  linkVerifiedEmail: boolean;
};

export type SsoConfig = { providers: OidcProviderConfig[]; passwordSignIn: boolean };

export class SsoConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Single sign-on is misconfigured:\n  - ${problems.join("\n  - ")}`);
    this.name = "SsoConfigError";
  }
}

const GROUP = /^[a-z0-9-]{2,40}$/; // as the admin console's people form (lib/admin/people.ts)
const RESERVED_IDS = new Set(["credentials", "signin", "signout", "callback", "session", "csrf", "providers", "error"]);

const roleSchema = z.enum(["admin", "reviewer", "requester"]);

const providerSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, "must be 1-40 lowercase letters, digits or dashes")
      .refine((id) => !RESERVED_IDS.has(id), "is reserved by the sign-in routes"),
    name: z.string().trim().min(1, "is required").max(60, "is longer than 60 characters"),
    issuer: z
      .string()
      .url("must be a URL")
      .refine((u) => /^https?:$/.test(new URL(u).protocol), "must be an http(s) URL")
      .refine((u) => new URL(u).protocol === "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(new URL(u).hostname), "must use https (plain http only for localhost)"),
    clientId: z.string().min(1, "is required"),
    clientSecret: z.string().min(1, "is required"),
    scopes: z
      .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be scope tokens without spaces"))
      .default(["openid", "email", "profile"])
      .refine((s) => s.includes("openid"), "must include openid"),
    claimsFrom: z.enum(["id_token", "userinfo"]).default("id_token"),
    groupsClaim: z.string().regex(/^[A-Za-z0-9_:\/-]+(\.[A-Za-z0-9_:\/-]+)*$/, "must be a claim name or dotted path").default("groups"),
    groupMap: z
      .record(z.string().min(1), z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v])))
      .default({})
      .superRefine((map, ctx) => {
        for (const [from, to] of Object.entries(map))
          for (const g of to) if (!GROUP.test(g)) ctx.addIssue({ code: "custom", message: `maps "${from}" to "${g}", which is not a group name (2-40 lowercase letters, digits or dashes)` });
      }),
    roleMap: z.record(z.string().min(1), roleSchema).default({}),
    defaultRole: roleSchema.nullable().default(null),
    linkVerifiedEmail: z.boolean().default(false),
  })
  .strict();

function describe(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}`;
  if (issue.code === "invalid_type" && issue.input === undefined) return `${path} is required`;
  return path ? `${path} ${issue.message}` : issue.message;
}

/** Reads and validates the single sign-on settings from `env`; throws SsoConfigError naming every bad value. */
export function parseSsoConfig(env: Record<string, string | undefined> = process.env): SsoConfig {
  const problems: string[] = [];
  const providers: OidcProviderConfig[] = [];

  const passwordRaw = (env.COUNTERSIGN_PASSWORD_SIGN_IN ?? "on").trim().toLowerCase();
  const passwordSignIn = ["on", "1", "true", ""].includes(passwordRaw) ? true : ["off", "0", "false"].includes(passwordRaw) ? false : null;
  if (passwordSignIn === null) problems.push(`COUNTERSIGN_PASSWORD_SIGN_IN must be "on" or "off", not ${JSON.stringify(env.COUNTERSIGN_PASSWORD_SIGN_IN)}`);

  const raw = env.COUNTERSIGN_OIDC_PROVIDERS?.trim();
  if (raw) {
    let list: unknown;
    try {
      list = JSON.parse(raw);
    } catch (e) {
      problems.push(`COUNTERSIGN_OIDC_PROVIDERS is not JSON: ${(e as Error).message}`);
    }
    if (list !== undefined && !Array.isArray(list)) problems.push("COUNTERSIGN_OIDC_PROVIDERS must be a JSON array of providers");
    if (Array.isArray(list)) {
      list.forEach((entry, i) => {
        const label = entry && typeof entry === "object" && typeof (entry as { id?: unknown }).id === "string" ? `provider "${(entry as { id: string }).id}"` : `provider #${i + 1}`;
        const parsed = providerSchema.safeParse(entry);
        if (!parsed.success) {
          for (const issue of parsed.error.issues) problems.push(`COUNTERSIGN_OIDC_PROVIDERS ${label}: ${describe(issue)}`);
          return;
        }
        if (providers.some((p) => p.id === parsed.data.id)) problems.push(`COUNTERSIGN_OIDC_PROVIDERS ${label}: the id is used twice`);
        else providers.push(parsed.data); // the issuer kept verbatim: discovery must answer with exactly it
      });
    }
  }

  if (passwordSignIn === false && providers.length === 0 && problems.length === 0)
    problems.push("COUNTERSIGN_PASSWORD_SIGN_IN=off needs at least one provider in COUNTERSIGN_OIDC_PROVIDERS, or nobody could sign in");
  if (problems.length) throw new SsoConfigError(problems);
  return { providers, passwordSignIn: passwordSignIn! };
}

let cached: SsoConfig | null = null;

/** The process's settings, parsed once. */
export function ssoConfig(): SsoConfig {
  return (cached ??= parseSsoConfig(process.env));
}

/** Public facts about the providers, for pages (never the client secret). */
export function ssoProviders(): { id: string; name: string }[] {
  return ssoConfig().providers.map((p) => ({ id: p.id, name: p.name }));
}

/** The display name of the provider that sets a user's groups (User.groupsSource), or "local". */
export function groupsSourceLabel(source: string | null): string {
  if (!source) return "local";
  return ssoConfig().providers.find((p) => p.id === source)?.name ?? source;
}
