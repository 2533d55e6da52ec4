/**
 * The pub/sub channel a lock's release is announced on. The key is base64url-encoded so the
 * channel is safe in a URL path (Upstash's REST subscribe endpoint puts it there) whatever the
 * id contains; every version and client derives the same name.
 */
export function releaseChannel(key: string): string {
  const bytes = new TextEncoder().encode(key);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const base64url = btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return `lock-released:${base64url}`;
}
