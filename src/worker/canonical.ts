// Turns the URL path into the one logical path every later step uses. Anything that could make
// two spellings reach the same resource differently (dot segments, empty segments, control
// characters, malformed percent-encoding) is refused, never silently repaired.

import { badRequest } from '../framework/errors';

export function canonicalPath(encodedPath: string): string {
  let path: string;
  try {
    path = decodeURIComponent(encodedPath);
  } catch {
    throw badRequest('invalid request path: malformed percent-encoding or not valid UTF-8');
  }
  if (/[\u0000-\u001f\u007f]/.test(path)) throw badRequest('invalid request path: control characters are not allowed');
  // The runtime turns bytes that are not UTF-8 into U+FFFD before a Worker sees the URL, so
  // "\xff", "\xfe" and an encoded U+FFFD would all name one key: the character is refused.
  if (path.includes('\ufffd')) throw badRequest('invalid request path: not valid UTF-8 (U+FFFD is refused, since invalid bytes arrive as it)');
  if (path.startsWith('/')) throw badRequest('invalid request path: empty segments are not allowed');
  const segments = path.split('/');
  segments.forEach((seg, i) => {
    if (seg === '.' || seg === '..') throw badRequest('invalid request path: "." and ".." segments are not allowed');
    // A trailing slash is meaningful (it marks a folder); an empty segment anywhere else is not.
    if (seg === '' && i !== segments.length - 1) throw badRequest('invalid request path: empty segments are not allowed');
  });
  return path;
}
