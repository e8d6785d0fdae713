// Turns the URL path into the one logical path every later step uses. Anything that could make
// two spellings reach the same resource differently (dot segments, empty segments, control
// characters, malformed percent-encoding) is refused, never silently repaired.
//
// Empty segments have one exception, decided after routing (handler.ts): the tail of a PKI OCSP
// GET is a base64 request (RFC 6960 A.1) in which "//" is data. Vault's Go mux redirects such
// requests and breaks them; here they are answered.

import { badRequest } from '../framework/errors';

export interface DecodedPath {
  path: string;
  /** Offset in `path` of the first empty segment (not a trailing slash), or -1. */
  emptyAt: number;
}

const EMPTY_SEGMENTS = 'invalid request path: empty segments are not allowed';

/** Decodes and checks everything but empty segments, which are reported for the router to judge. */
export function decodePath(encodedPath: string): DecodedPath {
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
  let emptyAt = -1;
  let start = 0;
  for (const seg of path.split('/')) {
    if (seg === '.' || seg === '..') throw badRequest('invalid request path: "." and ".." segments are not allowed');
    // A trailing slash is meaningful (it marks a folder); an empty segment anywhere else is not.
    if (seg === '' && emptyAt < 0 && start < path.length) emptyAt = start;
    start += seg.length + 1;
  }
  return { path, emptyAt };
}

/** Refuses an empty segment at `emptyAt` (-1: none) unless an opaque tail starts at or before it. */
export function refuseEmptySegments(emptyAt: number, opaqueFrom = Infinity): void {
  if (emptyAt >= 0 && emptyAt < opaqueFrom) throw badRequest(EMPTY_SEGMENTS);
}
