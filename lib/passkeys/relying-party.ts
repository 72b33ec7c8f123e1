/**
 * The WebAuthn relying party: the RP ID a passkey is scoped to and the origin assertions must come from.
 * COUNTERSIGN_PASSKEY_ORIGIN, else AUTH_URL's origin, else the origin the request came to (passed in by the route).
 * COUNTERSIGN_PASSKEY_RP_ID, else that origin's host name. Browsers refuse an IP address as RP ID, so a passkey
 * needs a host name (localhost included).
 */
export type RelyingParty = { rpId: string; origin: string; rpName: string };

function originOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

export function relyingParty(requestOrigin?: string | null): RelyingParty | null {
  const origin = originOf(process.env.COUNTERSIGN_PASSKEY_ORIGIN) ?? originOf(process.env.AUTH_URL) ?? originOf(requestOrigin ?? undefined);
  if (!origin) return null;
  const rpId = process.env.COUNTERSIGN_PASSKEY_RP_ID?.trim() || new URL(origin).hostname;
  return { rpId, origin, rpName: "Countersign" };
}
