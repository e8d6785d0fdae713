// A stand-in for the user's browser in the OIDC e2e tests: it opens an auth_url at the IdP,
// follows redirects with a cookie jar, fills in the login and consent forms, and stops where the
// IdP hands the result to the redirect_uri — a redirect carrying code and state (query mode), or
// the auto-submitting page whose form posts them (form_post mode).

export type IdPResult =
  | { kind: 'redirect'; url: URL }
  | { kind: 'form_post'; action: string; fields: Record<string, string> }
  /** The IdP answered with an error (a status of 400 and above) before reaching the redirect_uri. */
  | { kind: 'error'; status: number; body: string };

const decodeHtml = (s: string) =>
  s.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(amp|lt|gt|quot|apos));/gi, (_m, dec: string, hex: string, name: string) => {
    if (dec) return String.fromCharCode(parseInt(dec, 10));
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[name.toLowerCase()] ?? '';
  });

/** The first form of an HTML page: its action and its named inputs with their values. */
function parseForm(html: string): { action: string; fields: Record<string, string> } | null {
  const form = /<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const fields: Record<string, string> = {};
  for (const input of form[2].matchAll(/<input\b([^>]*)>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input[1]);
    const value = /\bvalue="([^"]*)"/i.exec(input[1]);
    if (name) fields[decodeHtml(name[1])] = value ? decodeHtml(value[1]) : '';
  }
  return { action: decodeHtml(form[1]), fields };
}

export class Browser {
  private readonly cookies = new Map<string, string>();

  private async request(url: string, form?: Record<string, string>): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method: form ? 'POST' : 'GET', headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    // Node's Headers has getSetCookie; the Workers types in scope do not declare it.
    for (const line of (res.headers as unknown as { getSetCookie(): string[] }).getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      // Path scoping is ignored: the IdP's cookie names are distinct, and an expired one is dropped.
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /**
   * Signs `user` in at the IdP starting from `authUrl` and returns what the IdP sends towards
   * `redirectUri` (which the browser does not call: the test decides what to do with it).
   */
  async signIn(authUrl: string, user: string, password: string, redirectUri: string): Promise<IdPResult> {
    const target = new URL(redirectUri);
    const isTarget = (u: URL) => u.origin === target.origin && u.pathname === target.pathname;
    let url = authUrl;
    let form: Record<string, string> | undefined;
    for (let hop = 0; hop < 20; hop++) {
      const res = await this.request(url, form);
      form = undefined;
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, url);
        if (isTarget(next)) return { kind: 'redirect', url: next };
        url = next.toString();
        continue;
      }
      const body = await res.text();
      if (res.status >= 400) return { kind: 'error', status: res.status, body };
      const page = parseForm(body);
      if (!page) throw new Error(`unexpected page at ${url}: ${res.status} ${body.slice(0, 500)}`);
      const action = new URL(page.action || url, url);
      if (isTarget(action)) return { kind: 'form_post', action: action.toString(), fields: page.fields };
      if (page.fields.prompt === 'login') form = { ...page.fields, login: user, password };
      else if (page.fields.prompt === 'consent') form = page.fields;
      else throw new Error(`unknown form at ${url}: ${body.slice(0, 500)}`);
      url = action.toString();
    }
    throw new Error(`too many redirects starting at ${authUrl}`);
  }
}
