import { notFound, redirect } from "next/navigation";
import { hasRole, requireUser, VIEW_ROLES } from "@/lib/auth/session";
import { requestIdForTask } from "@/lib/inbox/queries";

export const dynamic = "force-dynamic";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A link by task id (what an agent prints) to the approval request the task waits on. */
export default async function TaskLink({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const user = await requireUser();
  const requestId = hasRole(user, VIEW_ROLES) && UUID.test(id) ? await requestIdForTask(id, user) : null;
  if (requestId) redirect(`/requests/${requestId}`);
  // Unknown, malformed and foreign ids alike: 404 with the same page (./not-found.tsx).
  notFound();
}
