/**
 * The agents section of the admin console with OAuth agents: issuer, client id and state (pending, enabled,
 * revoked), the Enable action only on a pending agent, and every value from a token escaped. The page is the real
 * server component rendered to HTML against the real database; only the session edge is replaced (as in
 * tests/ui-security.test.ts).
 */
import { renderToStaticMarkup } from "react-dom/server";
import { beforeEach, describe, expect, it, vi } from "vitest";

const state = vi.hoisted(() => ({ session: null as null | { user: { id: string; signedInAt: number; seenAt: number } } }));
vi.mock("@/lib/auth/auth", () => ({ auth: vi.fn(async () => state.session), signIn: vi.fn(), signOut: vi.fn(), handlers: {} }));
vi.mock("next-auth", () => ({ AuthError: class AuthError extends Error {} }));
vi.mock("next/headers", () => ({ headers: async () => new Headers({ host: "countersign.test" }), cookies: async () => new Map() }));
vi.mock("next/cache", () => ({ revalidatePath: vi.fn(), revalidateTag: vi.fn() }));

import PeoplePage from "../app/admin/people/page";
import { db } from "../lib/db/client";
import { resetDb, userId } from "./support/db";
import { newSessionTimes } from "../lib/auth/session-lifetime";

beforeEach(resetDb);

describe("admin → people and agents, OAuth agents", () => {
  it("lists a pending OAuth agent with its issuer and client id (escaped) and an Enable action; an enabled one without", async () => {
    const admin = await userId("admin@countersign.test");
    state.session = { user: { id: admin, ...newSessionTimes(new Date()) } };
    const common = { tokenPrefix: "oauth", userId: admin, oauthIssuer: "https://auth.example.com" };
    await db().agent.create({ data: { ...common, name: "oauth-img-src-x", tokenHash: "h1", oauthClientId: '<img src=x onerror="alert(1)">', pendingSince: new Date() } });
    await db().agent.create({ data: { ...common, name: "oauth-ci-agent", tokenHash: "h2", oauthClientId: "ci-agent", userId: await userId("rita.requester@countersign.test") } });
    const html = renderToStaticMarkup(await PeoplePage());

    const row = (name: string) => html.slice(html.indexOf(`data-testid="agent-${name}"`), html.indexOf("</li>", html.indexOf(`data-testid="agent-${name}"`)));
    const pending = row("oauth-img-src-x");
    expect(pending).toContain("pending since");
    expect(pending).toContain("acts for nobody until enabled");
    expect(pending).toContain("https://auth.example.com");
    expect(pending).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).not.toContain("<img src=x");
    expect(pending).toContain('aria-label="Enable oauth-img-src-x"');

    const enabled = row("oauth-ci-agent");
    expect(enabled).toContain("active");
    expect(enabled).toContain("acts for Rita");
    expect(enabled).toContain("OAuth client");
    expect(enabled).not.toContain("Enable oauth-ci-agent");
    expect(enabled).toContain('aria-label="Revoke oauth-ci-agent"');

    // Token agents are shown as before.
    expect(row("support-bot")).toContain("token");
    expect(row("support-bot")).not.toContain("OAuth client");
  });
});
