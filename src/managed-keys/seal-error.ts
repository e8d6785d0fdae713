// The failure of a managed-key seal (./seal.ts): a ManagedKeyError whose status says whether the
// configuration or the key refused (400) or the backend could not be reached (502), and whose
// message begins with the seal's type ("pkcs11 seal: …", "awskms seal: …").

import { ManagedKeyError } from './types';

export class ManagedKeySealError extends ManagedKeyError {
  constructor(status: number, message: string) {
    super(status, message);
    this.name = 'SealError';
  }
}

/** "<type> seal: <message>". */
export const sealFailure = (type: string, message: string, status = 400): ManagedKeySealError => new ManagedKeySealError(status, `${type} seal: ${message}`);

/** "the <type> seal is misconfigured: <problems>" (what a seal that cannot be built reports). */
export const sealMisconfigured = (type: string, problems: string): ManagedKeySealError => new ManagedKeySealError(400, `the ${type} seal is misconfigured: ${problems}`);
