// The text/html answers of the form_post callback (reference §2.4): the page that hands the state
// back to the UI window that opened the login (which then calls GET callback with code=no_code),
// and the error page.

import type { LogicalResponse } from '../../framework/backend';

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** A JS string literal safe inside a <script> element (no way to close the element from it). */
const jsString = (s: string): string => JSON.stringify(s).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
${body}
</body>
</html>
`;
}

/** The page a form_post callback answers with: it passes the state to the opener window. */
export function formPostPage(mount: string, state: string): string {
  const message = `{source: 'oidc-callback', path: ${jsString(mount)}, code: 'no_code', state: ${jsString(state)}}`;
  return page(
    'Completing the sign-in process',
    `<p>Completing the sign-in process...</p>
<script>
if (window.opener) { window.opener.postMessage(${message}, window.origin); }
</script>`,
  );
}

export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}

/** A raw HTML answer: the HTTP layer sends the page as-is with that content type. */
export function htmlResponse(status: number, html: string): LogicalResponse {
  return { raw: { status, body: html, contentType: 'text/html; charset=utf-8' } };
}
