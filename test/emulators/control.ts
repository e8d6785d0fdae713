// The one request helper of the emulators' control-API clients (…/client.ts): usable from Node and
// from tests inside workerd (no Node imports). A non-2xx answer throws with the emulator's text.

export async function controlCall<T>(emulator: string, url: string, method: 'GET' | 'POST' | 'DELETE', body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${emulator} ${method} ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
