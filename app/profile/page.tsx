import type { Metadata } from "next";
import { DelegationForm, type DelegationItem } from "@/components/DelegationForm";
import { PasskeyList } from "@/components/PasskeyList";
import { ProfileForm } from "@/components/ProfileForm";
import { SlackLinkForm } from "@/components/SlackLinkForm";
import { requireUser } from "@/lib/auth/session";
import { delegateCandidates, delegationsOf, type DelegationView } from "@/lib/approvals/delegation";
import { listPasskeys } from "@/lib/passkeys/registration";
import { notificationPreference } from "@/lib/notify/preferences";
import { slackLinkOf } from "@/lib/slack/link";
import { slackSigningSecret } from "@/lib/slack/settings";
import { signOutEverywhereAction } from "../login/actions";
import {
  beginPasskeyAction,
  createDelegationAction,
  endDelegationAction,
  finishPasskeyAction,
  removePasskeyAction,
  setEmailPreferenceAction,
  slackLinkCodeAction,
  slackUnlinkAction,
} from "./actions";

function item(d: DelegationView, other: "delegate" | "delegator"): DelegationItem {
  return { id: d.id, other: d[other], startsAt: d.startsAt.toISOString(), endsAt: d.endsAt.toISOString(), active: d.active };
}

export const metadata: Metadata = { title: "Profile" };
export const dynamic = "force-dynamic";

export default async function ProfilePage() {
  const user = await requireUser();
  const pref = await notificationPreference(user.id);
  const slack = user.role === "reviewer" ? await slackLinkOf(user.id) : null;
  const delegations = user.role === "reviewer" ? await delegationsOf(user.id, new Date()) : null;
  return (
    <section aria-labelledby="profile-heading" className="max-w-2xl space-y-4">
      <h1 id="profile-heading" className="text-xl font-semibold tracking-tight">
        Your profile
      </h1>
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 rounded-lg border border-slate-200 bg-white p-4 text-sm">
        <dt className="text-slate-600">Name</dt>
        <dd>{user.name}</dd>
        <dt className="text-slate-600">Email</dt>
        <dd>{user.email}</dd>
        <dt className="text-slate-600">Role</dt>
        <dd>{user.role}</dd>
        {user.groups.length > 0 && (
          <>
            <dt className="text-slate-600">Groups</dt>
            <dd>{user.groups.join(", ")}</dd>
          </>
        )}
      </dl>
      <ProfileForm action={setEmailPreferenceAction} email={pref.email} emailConfigured={pref.emailConfigured} />
      {user.role === "reviewer" && (
        <SlackLinkForm linkAction={slackLinkCodeAction} unlinkAction={slackUnlinkAction} linkedAs={slack?.slackUser ?? null} configured={slackSigningSecret() !== null} />
      )}
      {delegations && (
        <DelegationForm
          candidates={await delegateCandidates(user.id)}
          given={delegations.given.map((d) => item(d, "delegate"))}
          received={delegations.received.map((d) => item(d, "delegator"))}
          create={createDelegationAction}
          end={endDelegationAction}
        />
      )}
      {user.role === "reviewer" && <PasskeyList passkeys={await listPasskeys(user.id)} begin={beginPasskeyAction} finish={finishPasskeyAction} remove={removePasskeyAction} />}
      <form action={signOutEverywhereAction} className="rounded-lg border border-slate-200 bg-white p-4 text-sm" aria-labelledby="sessions-heading">
        <h2 id="sessions-heading" className="font-medium text-slate-900">
          Sessions
        </h2>
        <p className="mt-1 text-slate-700">Signed in on a device you no longer have? This signs you out of every browser, this one too.</p>
        <button type="submit" className="mt-2 rounded-md border border-slate-300 bg-white px-3 py-1.5 font-medium text-slate-800 hover:bg-slate-50">
          Sign out everywhere
        </button>
      </form>
    </section>
  );
}
