import { redirect } from "next/navigation";

/** /admin opens the all-pending view. */
export default function AdminHome() {
  redirect("/admin/pending");
}
