// Device types and options as sys/audit/:path accepts them.
import { describe, expect, it } from 'vitest';
import { parseDeviceOptions } from '../../../../src/core/audit/options';
import { CofferError } from '../../../../src/framework/errors';

function refusal(type: string, options: Record<string, string>): string {
  try {
    parseDeviceOptions(type, options);
  } catch (e) {
    expect(e).toBeInstanceOf(CofferError);
    expect((e as CofferError).status).toBe(400);
    return (e as CofferError).errors[0];
  }
  throw new Error('accepted');
}

describe('device options', () => {
  it('applies Vault defaults', () => {
    const { options, warnings } = parseDeviceOptions('file', { file_path: 'stdout' });
    expect(options).toEqual({ type: 'file', filePath: 'stdout', url: '', prefix: '', hmacAccessor: true, logRaw: false, elideListResponses: false });
    expect(warnings).toEqual([]);
  });

  it("parses booleans with Go's spellings (string maps turn JSON booleans into 1/0)", () => {
    const { options } = parseDeviceOptions('file', { file_path: 'discard', hmac_accessor: '0', log_raw: 'true', elide_list_responses: 'T', format: 'json', prefix: 'AUDIT ' });
    expect(options).toMatchObject({ filePath: 'discard', hmacAccessor: false, logRaw: true, elideListResponses: true, prefix: 'AUDIT ' });
  });

  it('accepts the legacy `path` option and a file mode, and warns that a path means the Worker log', () => {
    const { options, warnings } = parseDeviceOptions('file', { path: '/var/log/vault_audit.log', mode: '0600' });
    expect(options.filePath).toBe('/var/log/vault_audit.log');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('Worker log');
  });

  it('warns about options it does not use', () => {
    expect(parseDeviceOptions('http', { url: 'https://example.com/a', file_path: 'x', filter: 'y' }).warnings).toEqual([
      'these options are not used by a http audit device and were ignored: file_path, filter',
    ]);
  });

  it('takes http and https URLs', () => {
    expect(parseDeviceOptions('http', { url: 'https://logs.example.com/in?x=1' }).options.url).toBe('https://logs.example.com/in?x=1');
    expect(parseDeviceOptions('http', { url: 'http://127.0.0.1:9000/x' }).options.url).toBe('http://127.0.0.1:9000/x');
  });

  it('takes batch for http devices only (one POST per group), off by default', () => {
    expect(parseDeviceOptions('http', { url: 'https://logs.example.com/in' }).options.batch).toBeUndefined();
    expect(parseDeviceOptions('http', { url: 'https://logs.example.com/in', batch: 'true' }).options.batch).toBe(true);
    expect(parseDeviceOptions('http', { url: 'https://logs.example.com/in', batch: '0' }).options.batch).toBeUndefined();
    expect(parseDeviceOptions('file', { file_path: 'stdout', batch: 'true' }).warnings).toEqual(['these options are not used by a file audit device and were ignored: batch']);
  });

  it.each([
    ['', {}, 'type is required'],
    ['nope', {}, 'unknown backend type: "nope"'],
    ['socket', { address: '127.0.0.1:9090' }, 'audit device type "socket" is not available: a Worker has no sockets; use "file" or "http"'],
    ['syslog', {}, 'audit device type "syslog" is not available: a Worker has no syslog; use "file" or "http"'],
    ['file', {}, 'file_path is required'],
    ['file', { file_path: 'stdout', format: 'jsonx' }, 'format "jsonx" is not supported: audit entries are written as "json" only'],
    ['file', { file_path: 'stdout', format: 'yaml' }, 'unknown format type "yaml"'],
    ['file', { file_path: 'stdout', hmac_accessor: 'yes' }, `unable to parse 'hmac_accessor': "yes" is not a boolean`],
    ['file', { file_path: 'stdout', log_raw: 'maybe' }, `unable to parse 'log_raw': "maybe" is not a boolean`],
    ['file', { file_path: 'stdout', mode: 'rw-------' }, `unable to parse 'mode': "rw-------" is not an octal file mode`],
    ['http', {}, 'url is required for an http audit device'],
    ['http', { url: 'not a url' }, 'url "not a url" is not a valid URL'],
    ['http', { url: 'ftp://example.com/x' }, 'url must use http or https, not ftp'],
    ['http', { url: 'https://user:pw@example.com/x' }, 'url must not carry credentials'],
    ['http', { url: 'https://example.com/x', batch: 'often' }, `unable to parse 'batch': "often" is not a boolean`],
  ])('refuses type %j with %j', (type, options, message) => {
    expect(refusal(type, options as Record<string, string>)).toBe(message);
  });
});
