// redirect_uri rules of the OIDC flow (reference §2.4): the allow-list match (case-insensitive;
// the port of a loopback host is ignored, RFC 8252 §7.3), the namespace carried in state, the
// form_post rewrite of UI URLs, and the mount path the form_post page reports to the UI.

import { parseIP } from '../../core/tokens/cidr';

/** `localhost` or a loopback IP (127.0.0.0/8, ::1), as Vault's isLocalAddr. */
function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost') return true;
  const ip = parseIP(hostname);
  if (!ip) return false;
  if (ip.length === 4) return ip[0] === 127;
  return ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1;
}

/** The URL without its port, for loopback hosts only (null: not a loopback URL, or not a URL). */
function withoutLoopbackPort(uri: string): string | null {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return null;
  }
  if (!isLoopbackHost(u.hostname)) return null;
  u.port = '';
  return u.toString();
}

/** True when `uri` is allowed: an exact (case-insensitive) match, or a loopback match on any port. */
export function redirectAllowed(uri: string, allowed: readonly string[]): boolean {
  try {
    new URL(uri);
  } catch {
    return false;
  }
  const loopback = withoutLoopbackPort(uri);
  if (loopback === null) return allowed.some((a) => a.toLowerCase() === uri.toLowerCase());
  return allowed.some((a) => {
    const other = withoutLoopbackPort(a);
    return other !== null && other.toLowerCase() === loopback.toLowerCase();
  });
}

/**
 * With namespace_in_state, a `namespace` query parameter is not part of the redirect URI: it is
 * removed before matching and travels in the state instead.
 */
export function splitNamespace(uri: string): { redirectUri: string; namespace: string } {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return { redirectUri: uri, namespace: '' };
  }
  const namespace = u.searchParams.get('namespace') ?? '';
  if (namespace === '') return { redirectUri: uri, namespace: '' };
  u.searchParams.delete('namespace');
  return { redirectUri: u.toString(), namespace };
}

/** form_post answers go to the API, not the UI, which has no form_post route. */
export const formPostRedirect = (uri: string): string => uri.replace('ui/vault', 'v1');

/** The state as the provider sees it when a namespace rides along: `<state>,ns=<namespace>`. */
export const stateWithNamespace = (state: string, namespace: string): string => (namespace ? `${state},ns=${namespace}` : state);

/** The stored state behind a callback's `state` (which may carry `,ns=...`). */
export const bareState = (state: string): string => state.split(',')[0];

/**
 * The auth mount path in a callback redirect URI (`.../v1/auth/<mount>/oidc/callback`), which the
 * form_post page hands to the UI; "" when the URI has no `/v1/auth/` segment.
 */
export function mountFromRedirect(uri: string): string {
  let path: string;
  try {
    path = new URL(uri).pathname;
  } catch {
    return '';
  }
  const at = path.indexOf('/v1/auth/');
  if (at < 0) return '';
  const rest = path.slice(at + '/v1/auth/'.length);
  const end = rest.lastIndexOf('/oidc/callback');
  const mount = end >= 0 ? rest.slice(0, end) : rest.split('/')[0];
  return mount.replace(/\/+$/, '');
}
