/** Where the database is: DATABASE_URL when set (a postgres:// URL), else the embedded server the launcher started. */
export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      "DATABASE_URL is not set. Start Countersign with `npm start` (which runs the embedded database) " +
        "or set DATABASE_URL=postgres://user@host:5432/db.",
    );
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new Error(`DATABASE_URL must be a postgres:// URL; got a value starting with "${url.slice(0, 12)}"`);
  }
  return url;
}
