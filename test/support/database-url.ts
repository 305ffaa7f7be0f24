/** `url` (a PostgreSQL connection URL) naming the database `name` instead of its own. */
export function databaseUrlNamed(url: string, name: string): string {
  const named = new URL(url);
  named.pathname = `/${name}`;
  return named.toString();
}
