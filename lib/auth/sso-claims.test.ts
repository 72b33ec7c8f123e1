/** From a provider's claims to role and approver groups through the configured mapping (pure). */
import { describe, expect, it } from "vitest";
import { mapClaims } from "./sso-claims";

const provider = {
  groupsClaim: "groups",
  groupMap: { "fin-approvers": ["treasury"], oncall: ["sre", "support-leads"], "support-team": ["support-leads"] },
  roleMap: { "cs-admins": "admin", "cs-requesters": "requester" } as const,
  defaultRole: null,
};

describe("mapClaims", () => {
  it("maps claim values to groups (deduplicated, sorted), ignoring unmapped values; any group makes a reviewer", () => {
    const r = mapClaims(provider, { sub: "u1", email: "Ivy@Example.com", email_verified: true, name: "Ivy", groups: ["oncall", "support-team", "everyone"] });
    expect(r).toEqual({ ok: true, identity: { subject: "u1", email: "ivy@example.com", emailVerified: true, name: "Ivy", role: "reviewer", groups: ["sre", "support-leads"] } });
  });

  it("the strongest mapped role wins, whatever the order", () => {
    for (const groups of [["cs-requesters", "cs-admins"], ["cs-admins", "cs-requesters", "oncall"]]) {
      const r = mapClaims(provider, { sub: "a", groups });
      expect(r.ok && r.identity.role).toBe("admin");
    }
    const req = mapClaims(provider, { sub: "r", groups: ["cs-requesters"] });
    expect(req.ok && req.identity).toMatchObject({ role: "requester", groups: [] });
  });

  it("refuses a user with nothing mapped, unless a default role is configured", () => {
    expect(mapClaims(provider, { sub: "x", groups: ["everyone"] })).toMatchObject({ ok: false, reason: expect.stringMatching(/none of the user's groups/) });
    expect(mapClaims(provider, { sub: "x" })).toMatchObject({ ok: false });
    const r = mapClaims({ ...provider, defaultRole: "requester" }, { sub: "x", groups: [] });
    expect(r.ok && r.identity).toMatchObject({ role: "requester", groups: [] });
  });

  it("a user removed from a group at the provider no longer has it: the mapping is computed afresh from each sign-in's claims", () => {
    const before = mapClaims(provider, { sub: "u", groups: ["oncall", "fin-approvers"] });
    const after = mapClaims(provider, { sub: "u", groups: ["fin-approvers"] });
    expect(before.ok && before.identity.groups).toEqual(["sre", "support-leads", "treasury"]);
    expect(after.ok && after.identity.groups).toEqual(["treasury"]);
  });

  it("reads a nested claim by a dotted path, a single string value, and ignores values that are not strings", () => {
    const kc = { ...provider, groupsClaim: "realm_access.roles" };
    const r = mapClaims(kc, { sub: "k", realm_access: { roles: ["fin-approvers", 7, null, ""] } });
    expect(r.ok && r.identity.groups).toEqual(["treasury"]);
    const single = mapClaims(provider, { sub: "s", groups: "oncall" });
    expect(single.ok && single.identity.groups).toEqual(["sre", "support-leads"]);
    // A claim name with a dot in it is taken as is before it is read as a path.
    const dotted = mapClaims({ ...provider, groupsClaim: "https://example.com/groups" }, { sub: "d", "https://example.com/groups": ["oncall"] });
    expect(dotted.ok && dotted.identity.groups).toEqual(["sre", "support-leads"]);
  });

  it("never maps through inherited object keys", () => {
    expect(mapClaims(provider, { sub: "p", groups: ["constructor", "__proto__", "toString"] })).toMatchObject({ ok: false });
  });

  it("needs a subject; an email counts as verified only when the provider says so; the name falls back", () => {
    expect(mapClaims(provider, { groups: ["oncall"] })).toMatchObject({ ok: false, reason: expect.stringMatching(/subject/) });
    const unverified = mapClaims(provider, { sub: "u", email: "a@b.example", groups: ["oncall"] });
    expect(unverified.ok && unverified.identity).toMatchObject({ email: "a@b.example", emailVerified: false, name: "a@b.example" });
    const bad = mapClaims(provider, { sub: "u", email: "not an email", email_verified: true, preferred_username: "ivy", groups: ["oncall"] });
    expect(bad.ok && bad.identity).toMatchObject({ email: null, emailVerified: false, name: "ivy" });
    const bare = mapClaims(provider, { sub: "only-sub", groups: ["oncall"] });
    expect(bare.ok && bare.identity.name).toBe("only-sub");
  });
});
