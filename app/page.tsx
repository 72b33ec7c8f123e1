import { redirect } from "next/navigation";
import { currentUser } from "@/lib/auth/session";

export default async function Home() {
  const user = await currentUser();
  redirect(user ? (user.role === "admin" ? "/admin/pending" : "/inbox") : "/login");
}
