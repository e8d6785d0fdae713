// A throwaway self-signed certificate for the emulator's https listener, made by openssl in a
// directory the caller owns (and removes): valid for 127.0.0.1 and for vault host names under the
// key store suffixes, so that an https client trusting it (and resolving those names to 127.0.0.1)
// can address vaults the way Azure does.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, 'emulator-cert.pem');
  const key = path.join(dir, 'emulator-key.pem');
  const names = ['IP:127.0.0.1', 'DNS:localhost', 'DNS:*.vault.azure.net', 'DNS:*.vault.azure.cn', 'DNS:*.vault.usgovcloudapi.net', 'DNS:*.vault.microsoftazure.de'];
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=azure-keyvault-emulator', '-addext', `subjectAltName=${names.join(',')}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}
