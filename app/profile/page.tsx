import type { Metadata } from "next";
import { ProfileForm } from "@/components/ProfileForm";
import { requireUser } from "@/lib/auth/session";
import { notificationPreference } from "@/lib/notify/preferences";
import { setEmailPreferenceAction } from "./actions";

export const metadata: Metadata = { title: "Profile" };
export const dynamic = "force-dynamic";

export default async function ProfilePage() {
  const user = await requireUser();
  const pref = await notificationPreference(user.id);
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
    </section>
  );
}
