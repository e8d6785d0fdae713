// The XML documents IAM and STS answer with: `<OpResponse xmlns=…><OpResult>…</OpResult>
// <ResponseMetadata><RequestId>…</RequestId></ResponseMetadata></OpResponse>` for a success and
// `<ErrorResponse xmlns=…><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>` for a
// failure. Results are plain objects: keys become elements in insertion order, `members([...])`
// becomes a list of <member> elements, undefined/null are left out. All text is escaped.

export const NAMESPACES = {
  iam: 'https://iam.amazonaws.com/doc/2010-05-08/',
  sts: 'https://sts.amazonaws.com/doc/2011-06-15/',
} as const;

export type Service = keyof typeof NAMESPACES;

export class Members {
  constructor(readonly items: readonly XmlValue[]) {}
}

export type XmlValue = string | number | boolean | null | undefined | Members | { [element: string]: XmlValue };

export const members = (items: readonly XmlValue[]) => new Members(items);

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#xD;' };

export const escapeXml = (text: string) => text.replace(/[&<>"'\r]/g, (c) => ESCAPES[c]);

function element(name: string, value: XmlValue): string {
  if (value === undefined || value === null) return '';
  return `<${name}>${content(value)}</${name}>`;
}

function content(value: XmlValue): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return escapeXml(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Members) return value.items.map((item) => element('member', item)).join('');
  let out = '';
  for (const [name, child] of Object.entries(value)) out += element(name, child);
  return out;
}

/** A success document; `result` undefined for the operations that answer with metadata only. */
export function resultDocument(service: Service, action: string, requestId: string, result?: { [element: string]: XmlValue }): string {
  const body = result === undefined ? '' : element(`${action}Result`, result);
  return (
    `<${action}Response xmlns="${NAMESPACES[service]}">${body}` +
    `<ResponseMetadata><RequestId>${escapeXml(requestId)}</RequestId></ResponseMetadata></${action}Response>\n`
  );
}

export function errorDocument(service: Service, type: string, code: string, message: string, requestId: string): string {
  return (
    `<ErrorResponse xmlns="${NAMESPACES[service]}"><Error><Type>${escapeXml(type)}</Type><Code>${escapeXml(code)}</Code>` +
    `<Message>${escapeXml(message)}</Message></Error><RequestId>${escapeXml(requestId)}</RequestId></ErrorResponse>\n`
  );
}
