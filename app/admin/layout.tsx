import type { ReactNode } from "react";
import { Notice } from "@/components/Notice";
import { requireRole } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

/** The admin console. Each page, action and route handler checks the admin role again itself. */
export default async function AdminLayout({ children }: { children: ReactNode }) {
  const admin = await requireRole("admin");
  if (!admin) return <Notice title="Admins only">The admin console is for accounts with the admin role.</Notice>;
  return <div className="space-y-4">{children}</div>;
}
